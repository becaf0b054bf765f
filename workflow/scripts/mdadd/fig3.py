"""Fig. 3: measured cost of SOCM vs the full second-moment matrix against feature dimension, and the cost claim's
paired difference of slopes with the interval its verdict is decided on."""

from repro.claims import load_claims
from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mdadd import figures
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
claims = load_claims(snakemake.input.claims, snakemake.input.schema)
table = figures.fig3_table(read_csv(snakemake.input.cost), claims)
save(figures.fig3(table), table, snakemake.output.pdf)
