"""rlqgrad_fig1: gradient (or update) variance vs n, one line per method, and each slope with its claim's interval."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.rlqgrad.figures import fig1
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = read_csv(snakemake.input.variance)
save(fig1(table), table, snakemake.output.pdf)
