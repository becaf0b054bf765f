"""opinion_fig3: learned attention vs node centrality (Spearman rho per graph, trained vs untrained)."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.opinion.figures import fig3, fig3_table

job = Job.from_snakemake(snakemake)
table = fig3_table(pd.read_csv(snakemake.input.attention), job.cfg["attention_alpha"])
save(fig3(table), table, snakemake.output.pdf)
