"""matt_table2: the paper's comparison, MATT (AIM only) against FOCUS + next-token training at equal CPU time."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.matt.figures import table2
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
save_table(
    table2(read_csv(snakemake.input.table)),
    snakemake.output.csv,
    title="matt: MATT (AIM only) vs FOCUS + next-token training of the new rows, matched on training CPU time",
    float_format="{:.3g}",
)
