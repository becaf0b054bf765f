"""Fig. 1: pass@1 and pass@k vs alpha (task i, and task ii when built), with the reverse-KL baseline, oracle pi* and
floor pi_ref, and the claims on them (paired by seed) with the intervals their verdicts take."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mcpo.figures import fig1, fig1_table
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
k = job.cfg["claim_k"]
claims = read_csv(snakemake.input.claims, float_precision="round_trip")
table = fig1_table(read_csv(snakemake.input.tidy), claims, k)
save(fig1(table, k), table, snakemake.output.pdf)
