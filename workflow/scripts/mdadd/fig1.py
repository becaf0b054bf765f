"""Fig. 1: TR@1 / IR@1 against the number of distilled pairs."""
import pandas as pd

from repro.figures import mdadd_fig1
from repro.figures.style import save
from repro.jobs import Job

Job.from_snakemake(snakemake)  # noqa: F821
table = mdadd_fig1.plot_table(pd.read_csv(snakemake.input.tidy))  # noqa: F821
save(mdadd_fig1.build(table), table, snakemake.output.pdf)  # noqa: F821
