"""driftbench_fig2: recall against judge adherence per model and condition, KBV marked."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.driftbench.figures import fig2, fig2_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
tidy = fig2_table(read_csv(snakemake.input.table))
save(fig2(tidy), tidy, snakemake.output.pdf)
