"""incrimination_fig1: protocol accuracy vs CoT faithfulness for CoT-only, interventions-only and combined."""

import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.incrimination.figures import fig1

Job.from_snakemake(snakemake)
table = pd.read_csv(snakemake.input.table)
save(fig1(table), table, snakemake.output.pdf)
