"""collapse_aggregate: survival over the injection grid, LLC and nullity per extinction, curvature vs weight."""

from repro.figures.style import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.collapse.experiment import summarise

job = Job.from_snakemake(snakemake)  # noqa: F821
records = [read_json(path) for path in snakemake.input.runs]  # noqa: F821
metrics, generations = summarise(records, survival_level=job.cfg["survival_level"])
save_csv(generations, snakemake.output.generations)  # noqa: F821
job.write_metrics(snakemake.output.metrics, metrics)  # noqa: F821
