"""collapse_fig2: LLC and Fisher nullity over generations, extinctions marked."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.collapse.figures import fig2, fig2_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
df = fig2_table(read_csv(snakemake.input.generations))
save(fig2(df), df, snakemake.output.pdf)
