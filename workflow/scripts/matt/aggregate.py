"""matt_aggregate: recovery per method and budget (table) and the per-item / per-seed samples (metrics.json)."""

import pandas as pd

from repro.figures.style import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.matt.experiment import summarise

job = Job.from_snakemake(snakemake)
runs: dict[str, list] = {}
for path in snakemake.input.runs:
    run = read_json(path)
    runs.setdefault(run["method"], []).append(run)
metrics, table = summarise(read_json(snakemake.input.scores)["scores"], runs)
save_csv(pd.DataFrame(table), snakemake.output.table)
job.write_metrics(snakemake.output.metrics, metrics)
