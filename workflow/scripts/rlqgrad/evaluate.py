"""rlqgrad_evaluate: slopes, speedups and accuracy differences into metrics.json; tables 1 and 2; fig1's table,
the variance curves with the claims' intervals of their slopes."""
from repro.claims import load_claims
from repro.tables import save_csv, save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.rlqgrad.experiment import aggregate, table1, table2

job = Job.from_snakemake(snakemake)
inp, out = snakemake.input, snakemake.output
metrics, tables = aggregate([read_json(p) for p in inp.variance], [read_json(p) for p in inp.benchmark],
                            [read_json(p) for p in inp.train], read_json(inp.agreement),
                            claims=load_claims(inp.claims, inp.claims_schema))
save_csv(tables["variance"], out.variance)
save_csv(tables["cost"], out.cost)
save_table(table1(tables), out.table1, title="rlqgrad Table 1: top-1 validation accuracy")
save_table(table2(tables), out.table2, title="rlqgrad Table 2: time and peak memory per update, RLQ-Grad speedups")
job.write_metrics(out.metrics, metrics)
