"""grokcap_fig3: bits memorised on random labels against parameters; the slope is the capacity."""

from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job
from repro.papers.grokcap.figures import fig3, fig3_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
metrics = read_json(snakemake.input.metrics)
df = fig3_table(read_csv(snakemake.input.runs))
save(fig3(df, metrics), df, snakemake.output.pdf)
