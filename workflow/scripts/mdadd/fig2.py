"""Fig. 2: seen minus unseen initialisation R@1 (initialisation overfitting), and the queue claim's paired difference."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mdadd import figures
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = figures.fig2_table(read_csv(snakemake.input.tidy), read_csv(snakemake.input.claims, float_precision="round_trip"))
save(figures.fig2(table), table, snakemake.output.pdf)
