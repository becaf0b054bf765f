"""incrimination_table1: the verdicts for each agent under investigation, with their evidence."""

from repro.tables import save_table
from repro.jobs import Job
from repro.papers.incrimination.figures import table1
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
save_table(table1(read_csv(snakemake.input.table)), snakemake.output.csv,
           title="incrimination: verdicts per agent and environment (effects: rate(control) - rate(intervention))")
