"""Fig. 3 of gtp (see repro.papers.gtp.figures.fig3)."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.gtp.figures import fig3, fig3_table

job = Job.from_snakemake(snakemake)
table = fig3_table(pd.read_csv(snakemake.input.tidy), job.cfg["main_n_samples"])
save(fig3(table), table, snakemake.output.pdf)
