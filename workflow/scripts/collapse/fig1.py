"""collapse_fig1: component weights over generations, synthetic-only vs injection."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.collapse.figures import fig1, fig1_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
df = fig1_table(read_csv(snakemake.input.generations))
save(fig1(df), df, snakemake.output.pdf)
