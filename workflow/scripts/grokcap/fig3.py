"""grokcap_fig3: bits memorised on random labels against parameters; the slope is the capacity."""

import pandas as pd

from repro.figures.grokcap_fig3 import build, table
from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job

Job.from_snakemake(snakemake)  # noqa: F821
metrics = read_json(snakemake.input.metrics)  # noqa: F821
df = table(pd.read_csv(snakemake.input.runs))  # noqa: F821
save(build(df, metrics), df, snakemake.output.pdf)  # noqa: F821
