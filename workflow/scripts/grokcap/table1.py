"""grokcap_table1: per width, P, T_mem, T_gen, grokking fraction; the fits, crossing and capacity."""

from repro.figures.grokcap_table1 import table
from repro.figures.style import save_table
from repro.io import read_json
from repro.jobs import Job

Job.from_snakemake(snakemake)  # noqa: F821
metrics = read_json(snakemake.input.metrics)  # noqa: F821
save_table(table(metrics), snakemake.output.csv,  # noqa: F821
           title="grokcap: memorisation and generalisation times across model sizes", float_format="{:.4g}")
