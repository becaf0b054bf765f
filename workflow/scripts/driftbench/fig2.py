"""driftbench_fig2: recall against judge adherence per model and condition, KBV marked."""

import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.driftbench.figures import fig2, fig2_table

Job.from_snakemake(snakemake)
tidy = fig2_table(pd.read_csv(snakemake.input.table))
save(fig2(tidy), tidy, snakemake.output.pdf)
