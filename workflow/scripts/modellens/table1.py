"""Table 1: NDCG@K, both weighted taus and Hit@1 of every method on every split."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.modellens.experiment import table1
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.tidy), job.cfg["main_k"]), snakemake.output.csv,
           title="modellens: ranking quality by split (mean +- s.e. over seeds)")
