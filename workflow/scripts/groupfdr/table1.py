"""Table 1: FDR and power of every method in every setting and at every q."""
import pandas as pd

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.groupfdr.experiment import table1

job = Job.from_snakemake(snakemake)
save_table(table1(pd.read_csv(snakemake.input.summary)), snakemake.output.csv,
           title="groupfdr: empirical FDR and power (mean +- s.e. over replicates)")
