"""grokcap_fig2: train and validation accuracy curves below, at and above the crossing."""

import pandas as pd

from repro.figures.grokcap_fig2 import build, table
from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job

Job.from_snakemake(snakemake)  # noqa: F821
metrics = read_json(snakemake.input.metrics)  # noqa: F821
df = table(pd.read_csv(snakemake.input.curves), metrics)  # noqa: F821
save(build(df), df, snakemake.output.pdf)  # noqa: F821
