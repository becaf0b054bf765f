"""Fig. 1 of gtp (see repro.papers.gtp.figures.fig1)."""
import pandas as pd

from repro.figures.style import save
from repro.papers.gtp.figures import fig1, fig1_table

table = fig1_table(pd.read_csv(snakemake.input.tidy))
save(fig1(table), table, snakemake.output.pdf)
