"""grokcap_fig1: T_mem(P) and T_gen(P), log-log, with power-law fits, crossing and threshold."""

import pandas as pd

from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job
from repro.papers.grokcap.figures import fig1, fig1_table

Job.from_snakemake(snakemake)
metrics = read_json(snakemake.input.metrics)
df = fig1_table(pd.read_csv(snakemake.input.runs), metrics)
save(fig1(df, metrics), df, snakemake.output.pdf)
