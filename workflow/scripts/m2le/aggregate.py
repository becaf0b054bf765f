"""Aggregate the runs into results/m2le/metrics.json, the tidy tables and the claims' intervals the figures draw."""
from repro.claims import load_claims
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.m2le.experiment import aggregate, claim_intervals

job = Job.from_snakemake(snakemake)
runs = {}
for path in snakemake.input.runs:
    run = read_json(path)
    runs[(run["sequence"], int(path.rsplit("seed", 1)[1].split(".")[0]))] = run
metrics, tidy, curve, modulation = aggregate(runs, job.cfg)
save_csv(tidy, snakemake.output.tidy)
save_csv(curve, snakemake.output.curve)
save_csv(modulation, snakemake.output.modulation)
claims = load_claims(snakemake.input.claims, snakemake.input.schema)
save_csv(claim_intervals(metrics, claims), snakemake.output.claims, float_format=None)
job.write_metrics(snakemake.output.metrics, metrics)
