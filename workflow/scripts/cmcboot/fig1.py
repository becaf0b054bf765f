"""cmcboot Fig. 1: coverage vs sample size, one panel per nominal level and target."""
import pandas as pd

from repro.figures.cmcboot_fig1 import build
from repro.figures.style import save
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
fig, plotted = build(pd.read_csv(snakemake.input.table), episode_length=job.cfg["episode_length"])
save(fig, plotted, snakemake.output.pdf)
