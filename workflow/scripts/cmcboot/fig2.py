"""cmcboot Fig. 2: coverage vs episode length at a fixed total sample size."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.cmcboot.figures import fig2
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
fig, plotted = fig2(read_csv(snakemake.input.table), sample_size=job.cfg["fig2_sample_size"])
save(fig, plotted, snakemake.output.pdf)
