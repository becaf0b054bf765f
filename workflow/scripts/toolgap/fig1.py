"""toolgap_fig1: mismatch rate per model and task, split into missed calls and over-calls."""

import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.toolgap.figures import fig1, fig1_table

Job.from_snakemake(snakemake)
table = fig1_table(pd.read_csv(snakemake.input.table))
save(fig1(table), table, snakemake.output.pdf)
