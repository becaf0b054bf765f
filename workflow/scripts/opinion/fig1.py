"""opinion_fig1: collective accuracy vs alpha, large static vs small dynamic networks."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.opinion.figures import fig1, sweep_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = sweep_table(read_csv(snakemake.input.results), "accuracy")
save(fig1(table), table, snakemake.output.pdf)
