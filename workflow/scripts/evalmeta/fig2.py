"""evalmeta_fig2: safe-behaviour shift (trait - control) per benchmark under eval-like vs deployment-like phrasing."""

import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.evalmeta.figures import fig2, fig2_table

Job.from_snakemake(snakemake)
table = fig2_table(pd.read_csv(snakemake.input.shifts))
save(fig2(table), table, snakemake.output.pdf)
