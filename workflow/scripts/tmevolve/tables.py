"""Tables 1 (methods x tasks), 3 (ablations) and 4 (Q x K grid) as CSV + Markdown."""
from repro.tables import save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.tmevolve.experiment import make_tables

job = Job.from_snakemake(snakemake)
tables = make_tables(read_json(snakemake.input.metrics), job.cfg)
for name, table in tables.items():
    save_table(table, snakemake.params.stems[name], title=snakemake.params.titles[name])
