"""driftbench_fig1: adherence and complexity per condition (final state), probe recall by turn."""

import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.driftbench.figures import fig1, fig1_table

Job.from_snakemake(snakemake)
tidy = fig1_table(pd.read_csv(snakemake.input.runs), pd.read_csv(snakemake.input.recall))
save(fig1(tidy), tidy, snakemake.output.pdf)
