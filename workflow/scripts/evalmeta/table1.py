"""evalmeta_table1: per benchmark, safe-behaviour and refusal rates of the base, control-, topic- and trait-tuned models."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.evalmeta.figures import table1
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.table)), snakemake.output.csv,
           title="evalmeta: safe-behaviour rate per benchmark and model (mean [95% CI] over items and seeds)")
