"""rlqgrad_fig2: time and peak memory per update vs n, one line per method."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.rlqgrad.figures import fig2, fig2_table

Job.from_snakemake(snakemake)
table = fig2_table(pd.read_csv(snakemake.input.cost))
save(fig2(table), table, snakemake.output.pdf)
