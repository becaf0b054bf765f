"""Aggregate every chunk into results/groupfdr/metrics.json and the tidy summary table."""
from repro.jobs import Job
from repro.papers.groupfdr.experiment import aggregate_files

job = Job.from_snakemake(snakemake)
metrics = aggregate_files(snakemake.input.runs, snakemake.input.block1, job.cfg, snakemake.output.summary)
job.write_metrics(snakemake.output.metrics, metrics)
