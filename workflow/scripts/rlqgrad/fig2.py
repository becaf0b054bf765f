"""rlqgrad_fig2: time and peak memory per update vs n, one line per method."""
import pandas as pd

from repro.figures.rlqgrad_fig2 import build, tidy
from repro.figures.style import save
from repro.jobs import Job

Job.from_snakemake(snakemake)  # noqa: F821
table = tidy(pd.read_csv(snakemake.input.cost))  # noqa: F821
save(build(table), table, snakemake.output.pdf)  # noqa: F821
