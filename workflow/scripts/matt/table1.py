"""matt_table1: recovery fraction per method at each fixed budget, with tokens and CPU-seconds."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.matt.figures import table1
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.table)), snakemake.output.csv,
           title="matt: recovery of the source model's quality per method and budget", float_format="{:.3g}")
