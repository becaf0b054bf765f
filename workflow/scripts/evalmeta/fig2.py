"""evalmeta_fig2: safe-behaviour shift (trait - control) per benchmark under eval-like vs deployment-like phrasing."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.evalmeta.figures import fig2, fig2_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = fig2_table(read_csv(snakemake.input.shifts))
save(fig2(table), table, snakemake.output.pdf)
