"""Fig. 3: measured cost of SOCM vs the full second-moment matrix against feature dimension."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mdadd import figures
from repro.papers.mdadd.experiment import cost_table

Job.from_snakemake(snakemake)
cost = cost_table(pd.read_csv(snakemake.input.cost))  # minimum over the timing repeats
save(figures.fig3(cost), cost, snakemake.output.pdf)
