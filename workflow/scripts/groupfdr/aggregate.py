"""Aggregate every chunk into results/groupfdr/metrics.json and the tidy summary table (with the
interval Fig. 1 draws for each quantity: the claim's where a claim decides it)."""
from repro.claims import load_claims
from repro.jobs import Job
from repro.papers.groupfdr.experiment import aggregate_files

job = Job.from_snakemake(snakemake)
claims = load_claims(snakemake.input.claims, snakemake.input.schema)
metrics = aggregate_files(snakemake.input.runs, snakemake.input.block1, job.cfg, snakemake.output.summary, claims)
job.write_metrics(snakemake.output.metrics, metrics)
