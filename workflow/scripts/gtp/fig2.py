"""Fig. 2 of gtp (see repro.papers.gtp.figures.fig2)."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.gtp.figures import fig2, fig2_table

job = Job.from_snakemake(snakemake)
table = fig2_table(pd.read_csv(snakemake.input.tidy), job.cfg["main_n_samples"])
save(fig2(table), table, snakemake.output.pdf)
