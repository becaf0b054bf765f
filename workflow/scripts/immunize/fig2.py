"""Fig. 2: extremal Hessian eigenvalues before/after immunization; estimator error and time vs model size."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.immunize.figures import fig2, fig2_table

job = Job.from_snakemake(snakemake)  # noqa: F821
table = fig2_table(pd.read_csv(snakemake.input.tidy), pd.read_csv(snakemake.input.scaling))  # noqa: F821
save(fig2(table), table, snakemake.output.pdf)  # noqa: F821
