"""cmcboot Table 1: coverage and width of every method, target and setting."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.cmcboot.figures import table1
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.table)), snakemake.output.csv,
           title="cmcboot: coverage (and mean width) of every interval method, target and setting")
