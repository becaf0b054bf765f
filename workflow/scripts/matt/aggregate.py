"""matt_aggregate: recovery per method and budget (the token-budget variant) and per arm (the paper's
comparison at equal CPU time), with the per-item / per-seed samples (metrics.json); the claims on the
token-budget variant with the intervals their verdicts are decided on (for fig1)."""

import pandas as pd

from repro.claims import load_claims
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.matt.experiment import COMPARISON_COLUMNS, comparisons, summarise
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
claims = load_claims(snakemake.input.claims, snakemake.input.claims_schema)
save_csv(pd.DataFrame(comparisons(metrics, claims), columns=COMPARISON_COLUMNS), snakemake.output.comparisons)
job.write_metrics(snakemake.output.metrics, metrics)
