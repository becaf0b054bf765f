"""Fig. 2: distribution of the element-wise modulation per layer, with the scalar optimum marked."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.m2le.figures import fig2, fig2_table

job = Job.from_snakemake(snakemake)
table = fig2_table(pd.read_csv(snakemake.input.modulation), pd.read_csv(snakemake.input.claims, float_precision="round_trip"))
save(fig2(table), table, snakemake.output.pdf)
