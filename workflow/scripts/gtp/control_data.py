"""The offline dataset of one classic-control task and seed (saved once, with its sha256 beside it)."""
from repro.jobs import Job
from repro.papers.gtp.control import ControlDataConfig, collect
from repro.papers.gtp.data import save_dataset

job = Job.from_snakemake(snakemake)
task, seed = job.wildcards["task"], int(job.wildcards["seed"])
data = collect(task, ControlDataConfig(**job.cfg["dataset"]), job.seed_for("gtp_control_data", task=task, seed=seed))
save_dataset(data, snakemake.output.data)
