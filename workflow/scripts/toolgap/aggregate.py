"""toolgap_aggregate: mismatch per model and task, probe decodability and cosines, the trajectory split, and the
intervals the claims are decided on (the checker's own, for the figures)."""

import pandas as pd

from repro.claims import load_claims
from repro.claimtables import claim_table
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.toolgap.experiment import summarise

job = Job.from_snakemake(snakemake)
runs = {}
for run_path, probe_path in zip(snakemake.input.runs, snakemake.input.probes):
    run, probes = read_json(run_path), read_json(probe_path)
    runs[(run["model"], run["task"])] = {"records": run["records"], "probes": probes, "generation": run.get("generation")}
losses = {p.split("/")[-2]: read_json(p)["loss"] for p in snakemake.input.losses}
metrics, table, layers = summarise(runs, losses)
save_csv(pd.DataFrame(table), snakemake.output.table)
save_csv(pd.DataFrame(layers), snakemake.output.layers)
claims = load_claims(snakemake.input.claims, snakemake.input.claims_schema)
save_csv(claim_table(claims, metrics), snakemake.output.claims, float_format=None)
job.write_metrics(snakemake.output.metrics, metrics)
