"""matt_table1: recovery fraction per method at each fixed budget, with tokens and CPU-seconds."""

import pandas as pd

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.matt.figures import table1

Job.from_snakemake(snakemake)
save_table(table1(pd.read_csv(snakemake.input.table)), snakemake.output.csv,
           title="matt: recovery of the source model's quality per method and budget", float_format="{:.3g}")
