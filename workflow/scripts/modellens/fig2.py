"""Fig. 2: regret against the number of candidates run on the target's probe set."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.modellens.figures import fig2, fig2_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = fig2_table(read_csv(snakemake.input.regret))
save(fig2(table), table, snakemake.output.pdf)
