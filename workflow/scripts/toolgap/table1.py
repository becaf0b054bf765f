"""toolgap_table1: the mismatch decomposition (cognition errors vs cognition-to-action errors)."""

import pandas as pd

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.toolgap.figures import table1

Job.from_snakemake(snakemake)
save_table(table1(pd.read_csv(snakemake.input.table)), snakemake.output.csv,
           title="toolgap: mismatch and its decomposition per model and task", float_format="{:.3g}")
