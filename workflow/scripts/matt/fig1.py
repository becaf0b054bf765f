"""matt_fig1: recovery (multiple choice, completion, bits per character) vs training budget per method, and the
claims on that variant with their intervals."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.matt.figures import fig1, fig1_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = fig1_table(read_csv(snakemake.input.table), read_csv(snakemake.input.comparisons))
save(fig1(table), table, snakemake.output.pdf)
