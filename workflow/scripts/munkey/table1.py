"""Table 1: forget / retain / test accuracy, MIA AUC, gaps to the oracles and time to forget, mean +- sd over seeds."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.munkey.experiment import table1
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.tidy)), snakemake.output.csv,
           title="munkey: unlearning by key deletion vs post-hoc baselines (mean ± sd over seeds)")
