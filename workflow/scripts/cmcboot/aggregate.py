"""cmcboot: coverage and width of every method, target, level and setting (metrics.json, long table)."""
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.cmcboot.experiment import aggregate

job = Job.from_snakemake(snakemake)
table, metrics = aggregate((read_json(path) for path in snakemake.input.chunks), job.cfg,
                           seed=job.seed_for("cmcboot_evidence"))
save_csv(table, snakemake.output.table)
job.write_metrics(snakemake.output.metrics, metrics)
