"""grokcap_fig2: train and validation accuracy curves below, at and above the crossing."""

from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job
from repro.papers.grokcap.figures import fig2, fig2_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
metrics = read_json(snakemake.input.metrics)
df = fig2_table(read_csv(snakemake.input.curves), metrics)
save(fig2(df), df, snakemake.output.pdf)
