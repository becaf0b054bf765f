"""Fig. 3: the safety frontier of task (iii), harmful refusal vs benign over-refusal across alpha, per reference model."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mcpo.figures import fig3, frontier_table

job = Job.from_snakemake(snakemake)
table = frontier_table(pd.read_csv(snakemake.input.tidy))
save(fig3(table), table, snakemake.output.pdf)
