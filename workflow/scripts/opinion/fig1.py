"""opinion_fig1: collective accuracy vs alpha, large static vs small dynamic networks."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.opinion.figures import fig1, sweep_table

Job.from_snakemake(snakemake)
table = sweep_table(pd.read_csv(snakemake.input.results), "accuracy")
save(fig1(table), table, snakemake.output.pdf)
