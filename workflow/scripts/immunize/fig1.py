"""Fig. 1: harmful-task accuracy vs adversary steps, per optimiser and learning rate, defended vs undefended."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.immunize.figures import fig1, fig1_table

job = Job.from_snakemake(snakemake)  # noqa: F821
table = fig1_table(pd.read_csv(snakemake.input.curves))  # noqa: F821
save(fig1(table), table, snakemake.output.pdf)  # noqa: F821
