"""Fig. 3: routing accuracy over each method's top-K pool as K grows, with the full pool."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.modellens.figures import fig3, fig3_table

Job.from_snakemake(snakemake)
table = fig3_table(pd.read_csv(snakemake.input.routing))
save(fig3(table), table, snakemake.output.pdf)
