"""Fig. 2: mode coverage of pi* and both KL divergences to pi* vs alpha (task i)."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mcpo.figures import curve_table, fig2

job = Job.from_snakemake(snakemake)  # noqa: F821
table = curve_table(pd.read_csv(snakemake.input.tidy), ["coverage", "kl_reverse", "kl_forward"])  # noqa: F821
save(fig2(table), table, snakemake.output.pdf)  # noqa: F821
