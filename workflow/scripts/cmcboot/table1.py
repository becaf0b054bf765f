"""cmcboot Table 1: coverage and width of every method, target and setting."""
import pandas as pd

from repro.figures.cmcboot_table1 import build
from repro.figures.style import save_table
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
save_table(build(pd.read_csv(snakemake.input.table)), snakemake.output.csv,
           title="cmcboot: coverage (and mean width) of every interval method, target and setting")
