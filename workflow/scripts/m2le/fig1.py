"""Fig. 1: accuracy on task 1 and the running average over the sequence, per method."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.m2le.figures import fig1, fig1_table

job = Job.from_snakemake(snakemake)
table = fig1_table(pd.read_csv(snakemake.input.curve), pd.read_csv(snakemake.input.claims, float_precision="round_trip"))
save(fig1(table), table, snakemake.output.pdf)
