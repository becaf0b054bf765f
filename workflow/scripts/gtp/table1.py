"""Table 1: score and success per method at the main budget, with planning compute per decision."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.gtp.experiment import table1
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.tidy), job.cfg["main_n_samples"]), snakemake.output.csv,
           title="gtp: maze score (return / optimal return) and success per method (mean +- s.e. over seeds)")
