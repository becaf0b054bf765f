"""matt_aggregate: recovery per method and budget (the token-budget variant) and per arm (the paper's
comparison at equal CPU time), with the per-item / per-seed samples (metrics.json)."""

import pandas as pd

from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.matt.experiment import summarise
from repro.papers.matt.matched import summarise_matched

job = Job.from_snakemake(snakemake)
scores = read_json(snakemake.input.scores)["scores"]
runs: dict[str, list] = {}
for path in snakemake.input.runs:
    run = read_json(path)
    runs.setdefault(run["method"], []).append(run)
arms: dict[str, list] = {}
for path in snakemake.input.matched:
    run = read_json(path)
    arms.setdefault(run["arm"], []).append(run)
metrics, table = summarise(scores, runs)
metrics["matched"], matched = summarise_matched(scores, arms, read_json(snakemake.input.calibration))
save_csv(pd.DataFrame(table), snakemake.output.table)
save_csv(pd.DataFrame(matched), snakemake.output.matched)
job.write_metrics(snakemake.output.metrics, metrics)
