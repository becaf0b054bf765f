"""driftbench_fig1: adherence and complexity per condition (final state), probe recall by turn."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.driftbench.figures import fig1, fig1_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
tidy = fig1_table(read_csv(snakemake.input.runs), read_csv(snakemake.input.recall))
save(fig1(tidy), tidy, snakemake.output.pdf)
