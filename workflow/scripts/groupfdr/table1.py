"""Table 1: FDR and power of every method in every setting and at every q."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.groupfdr.experiment import table1
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.summary)), snakemake.output.csv,
           title="groupfdr: empirical FDR and power (mean +- s.e. over replicates)")
