"""Fig. 1: TR@1 / IR@1 against the number of distilled pairs."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mdadd import figures

Job.from_snakemake(snakemake)  # noqa: F821
table = figures.fig1_table(pd.read_csv(snakemake.input.tidy))  # noqa: F821
save(figures.fig1(table), table, snakemake.output.pdf)  # noqa: F821
