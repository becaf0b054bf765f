"""grokcap_fig1: T_mem(P) and T_gen(P), log-log, with power-law fits, crossing and threshold."""

from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job
from repro.papers.grokcap.figures import fig1, fig1_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
metrics = read_json(snakemake.input.metrics)
df = fig1_table(read_csv(snakemake.input.runs), metrics)
save(fig1(df, metrics), df, snakemake.output.pdf)
