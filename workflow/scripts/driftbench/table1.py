"""driftbench_table1: KBV rate per model and condition with Wilson intervals."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.driftbench.figures import table1
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.table)), snakemake.output.csv,
           title="driftbench: knows-but-violates rate per model and condition (95% Wilson)", float_format="{:.3g}")
