"""toolgap_fig1: mismatch rate per model and task, split into missed calls and over-calls, and the claims on it with
the intervals their verdicts are decided on."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.toolgap.figures import fig1, fig1_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
claims = read_csv(snakemake.input.claims, float_precision="round_trip")
table = fig1_table(read_csv(snakemake.input.table), claims)
save(fig1(table), table, snakemake.output.pdf)
