"""collapse_fig4: neural diagnostics over generations, with and without real-data injection."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.collapse.figures import fig4, fig4_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
df = fig4_table(read_csv(snakemake.input.neural))
save(fig4(df), df, snakemake.output.pdf)
