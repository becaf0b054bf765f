"""toolgap_aggregate: mismatch per model and task (with its claim's interval, for fig1), probe decodability and
cosines, the trajectory split."""

import pandas as pd

from repro.claims import load_claims
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
metrics, table, layers = summarise(runs, losses, load_claims(snakemake.input.claims, snakemake.input.claims_schema))
save_csv(pd.DataFrame(table), snakemake.output.table)
save_csv(pd.DataFrame(layers), snakemake.output.layers)
job.write_metrics(snakemake.output.metrics, metrics)
