"""incrimination_fig2: intervention effects per environment for each planted motive (the fingerprints)."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.incrimination.figures import fig2
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = read_csv(snakemake.input.table)
save(fig2(table), table, snakemake.output.pdf)
