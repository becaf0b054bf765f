"""incrimination_table1: the verdicts for each agent under investigation, with their evidence."""

import pandas as pd

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.incrimination.figures import table1

Job.from_snakemake(snakemake)
save_table(table1(pd.read_csv(snakemake.input.table)), snakemake.output.csv,
           title="incrimination: verdicts per agent and environment (effects: rate(control) - rate(intervention))")
