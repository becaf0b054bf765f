"""collapse_fig2: LLC and Fisher nullity over generations, extinctions marked."""

import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.collapse.figures import fig2, fig2_table

Job.from_snakemake(snakemake)
df = fig2_table(pd.read_csv(snakemake.input.generations))
save(fig2(df), df, snakemake.output.pdf)
