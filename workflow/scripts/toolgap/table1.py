"""toolgap_table1: the mismatch decomposition (cognition errors vs cognition-to-action errors)."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.toolgap.figures import table1
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.table)), snakemake.output.csv,
           title="toolgap: mismatch and its decomposition per model and task", float_format="{:.3g}")
