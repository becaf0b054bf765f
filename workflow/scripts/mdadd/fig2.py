"""Fig. 2: seen minus unseen initialisation R@1 (initialisation overfitting), and the queue claim's paired difference."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mdadd import figures

Job.from_snakemake(snakemake)
table = figures.fig2_table(pd.read_csv(snakemake.input.tidy), pd.read_csv(snakemake.input.claims, float_precision="round_trip"))
save(figures.fig2(table), table, snakemake.output.pdf)
