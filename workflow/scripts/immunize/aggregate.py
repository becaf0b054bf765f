"""Aggregate the per-seed units into results/immunize/metrics.json and the tidy tables."""
from repro.figures.style import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.immunize.experiment import aggregate

job = Job.from_snakemake(snakemake)  # noqa: F821
seed_of = lambda p: int(p.rsplit("seed", 1)[1].split(".")[0])  # noqa: E731
records = {seed_of(p): read_json(p) for p in snakemake.input.units}  # noqa: F821
metrics, tidy, curves, scal = aggregate(records, job.cfg["methods"], job.cfg["models"])
save_csv(tidy, snakemake.output.tidy)  # noqa: F821
save_csv(curves, snakemake.output.curves)  # noqa: F821
save_csv(scal, snakemake.output.scaling)  # noqa: F821
job.write_metrics(snakemake.output.metrics, metrics)  # noqa: F821
