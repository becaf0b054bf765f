"""grokcap_table1: per width, P, T_mem, T_gen, grokking fraction; the fits, crossing and capacity."""

from repro.tables import save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.grokcap.figures import table1

Job.from_snakemake(snakemake)
metrics = read_json(snakemake.input.metrics)
save_table(table1(metrics), snakemake.output.csv,
           title="grokcap: memorisation and generalisation times across model sizes", float_format="{:.4g}")
