"""Collect the evaluations: Table 1, the tidy recall table, the initialisation gaps, metrics.json and the
claims' intervals the figures draw."""

from repro.claims import load_claims
from repro.tables import save_csv, save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.mdadd.experiment import claim_intervals, init_gap, summary_metrics, table1, tidy_recalls
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
tidy = tidy_recalls([read_json(p) for p in snakemake.input.evals])
cost = read_csv(snakemake.input.cost)
save_csv(tidy, snakemake.output.tidy)
save_csv(init_gap(tidy), snakemake.output.gap)
save_table(table1(tidy, job.cfg["methods"] + ["full"]), snakemake.output.table_md,
           title="MDA-DD Table 1: retrieval on the test split, students from unseen initialisations (mean +- sd)")
metrics = summary_metrics(tidy, cost, method="mdadd", ablation="mdadd_noqueue", baselines=job.cfg["baselines"])
claims = load_claims(snakemake.input.claims, snakemake.input.schema)
save_csv(claim_intervals(metrics, claims), snakemake.output.claims, float_format=None)
job.write_metrics(snakemake.output.metrics, metrics)
