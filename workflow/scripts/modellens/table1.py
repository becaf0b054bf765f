"""Table 1: NDCG@K, both weighted taus and Hit@1 of every method on every split."""
import pandas as pd

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.modellens.experiment import table1

job = Job.from_snakemake(snakemake)
save_table(table1(pd.read_csv(snakemake.input.tidy), job.cfg["main_k"]), snakemake.output.csv,
           title="modellens: ranking quality by split (mean +- s.e. over seeds)")
