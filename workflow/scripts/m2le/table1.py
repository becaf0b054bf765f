"""Table 1: average accuracy, forgetting and BWT per sequence and method, mean ± sd over seeds."""
import pandas as pd

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.m2le.experiment import table1

job = Job.from_snakemake(snakemake)
save_table(table1(pd.read_csv(snakemake.input.tidy)), snakemake.output.csv,
           title="m2le: LoRA continual learning after the last task (mean ± sd over seeds)")
