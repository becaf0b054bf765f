"""evalmeta_fig1: safe-behaviour shift (trait - control) per benchmark, all responses vs unaware pairs."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.evalmeta.figures import fig1, fig1_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = fig1_table(read_csv(snakemake.input.shifts))
save(fig1(table), table, snakemake.output.pdf)
