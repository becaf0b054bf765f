"""toolgap_train: one tiny transformer (repro.llm.tiny) trained on the task corpus with tool demonstrations."""

from pathlib import Path

from repro.io import read_json, write_json
from repro.jobs import Job
from repro.llm.tiny import save_tiny, train_tiny
from repro.papers.toolgap.experiment import tiny_train_config

job = Job.from_snakemake(snakemake)
docs = read_json(snakemake.input.data)["corpus"]
# one seed for every width: the models differ by their shape only
lm, losses = train_tiny(docs, tiny_train_config(job.cfg), seed=job.seed_for("toolgap-train"),
                        name=job.wildcards["model"], device=snakemake.params.device)
write_json(snakemake.output.loss, {"loss": losses, "n_docs": len(docs)})
save_tiny(lm, Path(snakemake.output.model).parent)
