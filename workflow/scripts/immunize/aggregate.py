"""Aggregate the per-seed units into results/immunize/metrics.json and the tidy tables."""
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.immunize.experiment import aggregate

job = Job.from_snakemake(snakemake)
seed_of = lambda p: int(p.rsplit("seed", 1)[1].split(".")[0])
records = {seed_of(p): read_json(p) for p in snakemake.input.units}
metrics, tidy, curves, scal = aggregate(records, job.cfg["methods"], job.cfg["models"])
save_csv(tidy, snakemake.output.tidy)
save_csv(curves, snakemake.output.curves)
save_csv(scal, snakemake.output.scaling)
job.write_metrics(snakemake.output.metrics, metrics)
