"""Fig. 1: FDR and power against correlation and amplitude."""
import pandas as pd

from repro.figures import groupfdr_fig1
from repro.figures.style import save
from repro.jobs import Job

job = Job.from_snakemake(snakemake)  # noqa: F821
table = pd.read_csv(snakemake.input.summary).dropna(subset=["sweep"])  # noqa: F821
save(groupfdr_fig1.build(table, job.cfg["figure_q"]), table, snakemake.output.pdf)  # noqa: F821
