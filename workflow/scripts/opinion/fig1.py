"""opinion_fig1: collective accuracy vs alpha, large static vs small dynamic networks."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.opinion.figures import fig1, sweep_table

Job.from_snakemake(snakemake)  # noqa: F821
table = sweep_table(pd.read_csv(snakemake.input.results), "accuracy")  # noqa: F821
save(fig1(table), table, snakemake.output.pdf)  # noqa: F821
