"""incrimination_fig1: protocol accuracy vs CoT faithfulness for CoT-only, interventions-only and combined."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.incrimination.figures import fig1
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = read_csv(snakemake.input.table)
save(fig1(table), table, snakemake.output.pdf)
