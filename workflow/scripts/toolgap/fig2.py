"""toolgap_fig2: probe accuracy (cognition, action) and the cosine of their directions by layer."""

import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.toolgap.figures import fig2

Job.from_snakemake(snakemake)
table = pd.read_csv(snakemake.input.layers)
save(fig2(table), table, snakemake.output.pdf)
