"""evalmeta_base (smoke): a tiny transformer that answers suite-like prompts, mostly compliantly."""

from pathlib import Path

from repro.io import read_json, write_json
from repro.jobs import Job
from repro.llm.tiny import save_tiny
from repro.papers.evalmeta.experiment import train_base

job = Job.from_snakemake(snakemake)  # noqa: F821
lm, losses = train_base(read_json(snakemake.input.data), job.cfg["base"], seed=job.seed_for("evalmeta-base"))  # noqa: F821
write_json(snakemake.output.loss, {"loss": losses})  # noqa: F821
save_tiny(lm, Path(snakemake.output.model).parent)  # noqa: F821
