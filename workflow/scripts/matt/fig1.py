"""matt_fig1: recovery (multiple choice, completion, bits per character) vs training budget per method."""

import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.matt.figures import fig1

Job.from_snakemake(snakemake)
table = pd.read_csv(snakemake.input.table)
save(fig1(table), table, snakemake.output.pdf)
