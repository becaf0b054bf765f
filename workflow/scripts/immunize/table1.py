"""Table 1: benign utility, downstream trainability, cost, relearning and service harm, mean ± sd over seeds."""
import pandas as pd

from repro.figures.style import save_table
from repro.jobs import Job
from repro.papers.immunize.experiment import table1

job = Job.from_snakemake(snakemake)  # noqa: F821
save_table(table1(pd.read_csv(snakemake.input.tidy)), snakemake.output.csv,  # noqa: F821
           title="immunize: utility, downstream trainability, cost and relearning per defence (mean ± sd over seeds)")
