"""Fig. 1: TR@1 / IR@1 against the number of distilled pairs."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mdadd import figures

Job.from_snakemake(snakemake)
table = figures.fig1_table(pd.read_csv(snakemake.input.tidy))
save(figures.fig1(table), table, snakemake.output.pdf)
