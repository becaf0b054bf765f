"""Fig. 1 of gtp: return vs environment steps of online fine-tuning per control task, and the claims on it (GTP minus a baseline, paired by seed) with the intervals their
verdicts are decided on (see repro.papers.gtp.figures.fig1)."""

from repro.claims import load_claims
from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job
from repro.papers.gtp.figures import fig1, fig1_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
claims = load_claims(snakemake.input.claims, snakemake.input.schema)
metrics = read_json(snakemake.input.metrics)
table = fig1_table(read_csv(snakemake.input.tidy), claims, metrics)
save(fig1(table), table, snakemake.output.pdf)
