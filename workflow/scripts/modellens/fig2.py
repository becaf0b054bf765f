"""Fig. 2: regret against the number of candidates run on the target's probe set."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.modellens.figures import fig2, fig2_table

Job.from_snakemake(snakemake)
table = fig2_table(pd.read_csv(snakemake.input.regret))
save(fig2(table), table, snakemake.output.pdf)
