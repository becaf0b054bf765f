"""cmcboot Fig. 1: coverage vs sample size, one panel per nominal level and target."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.cmcboot.figures import fig1
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
fig, plotted = fig1(read_csv(snakemake.input.table), episode_length=job.cfg["episode_length"])
save(fig, plotted, snakemake.output.pdf)
