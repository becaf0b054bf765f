"""Fig. 3: routing accuracy over each method's top-K pool as K grows, with the full pool."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.modellens.figures import fig3, fig3_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = fig3_table(read_csv(snakemake.input.routing))
save(fig3(table), table, snakemake.output.pdf)
