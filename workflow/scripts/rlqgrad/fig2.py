"""rlqgrad_fig2: time and peak memory per update vs n, one line per method."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.rlqgrad.figures import fig2, fig2_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = fig2_table(read_csv(snakemake.input.cost))
save(fig2(table), table, snakemake.output.pdf)
