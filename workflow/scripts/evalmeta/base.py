"""evalmeta_base (smoke): a tiny transformer that answers suite-like prompts, mostly compliantly."""

from pathlib import Path

from repro.io import read_json, write_json
from repro.jobs import Job
from repro.llm.tiny import save_tiny
from repro.papers.evalmeta.experiment import train_base

job = Job.from_snakemake(snakemake)
lm, losses = train_base(read_json(snakemake.input.data), job.cfg["base"], seed=job.seed_for("evalmeta-base"))
write_json(snakemake.output.loss, {"loss": losses})
save_tiny(lm, Path(snakemake.output.model).parent)
