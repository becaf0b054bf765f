"""Table 1: every metric of every alpha, the reverse-KL baseline, the oracle and the floor (task i)."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.mcpo.experiment import table1
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.tidy)), snakemake.output.csv,
           title="mcpo tasks (i) bandit and (ii) arithmetic: metrics by alpha (mean +- s.e. over seeds); task (iii) not run")
