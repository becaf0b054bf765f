"""Fig. 2 of gtp: success vs goal distance, and the claims on it (GTP minus a baseline, paired by seed) with the intervals their
verdicts are decided on (see repro.papers.gtp.figures.fig2)."""

from repro.claims import load_claims
from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job
from repro.papers.gtp.figures import fig2, fig2_table
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
claims = load_claims(snakemake.input.claims, snakemake.input.schema)
metrics = read_json(snakemake.input.metrics)
table = fig2_table(read_csv(snakemake.input.tidy), job.cfg["main_n_samples"], claims, metrics)
save(fig2(table), table, snakemake.output.pdf)
