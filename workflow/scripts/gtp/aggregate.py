"""Aggregate the seeds into results/gtp/metrics.json and the tidy per-seed table."""
from repro.figures.style import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.gtp.experiment import aggregate

job = Job.from_snakemake(snakemake)  # noqa: F821
runs = {int(p.rsplit("seed", 1)[1].split(".")[0]): read_json(p) for p in snakemake.input.runs}  # noqa: F821
metrics, tidy = aggregate(runs, job.cfg)
save_csv(tidy, snakemake.output.tidy)  # noqa: F821
job.write_metrics(snakemake.output.metrics, metrics)  # noqa: F821
