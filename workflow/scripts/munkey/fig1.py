"""Fig. 1: forget-set accuracy and MIA AUC vs fraction of keys deleted, against the oracle."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.munkey.figures import fig1, fig1_table
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
table = fig1_table(read_csv(snakemake.input.sweep))
save(fig1(table), table, snakemake.output.pdf)
