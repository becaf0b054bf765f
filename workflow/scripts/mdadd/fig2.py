"""Fig. 2: seen minus unseen initialisation R@1 (initialisation overfitting)."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mdadd import figures

Job.from_snakemake(snakemake)
gap = pd.read_csv(snakemake.input.gap)
save(figures.fig2(gap), gap, snakemake.output.pdf)
