"""rlqgrad_fig1: gradient (or update) variance vs n, one line per method, and each slope with its claim's interval."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.rlqgrad.figures import fig1

Job.from_snakemake(snakemake)
table = pd.read_csv(snakemake.input.variance)
save(fig1(table), table, snakemake.output.pdf)
