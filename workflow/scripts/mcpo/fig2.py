"""Fig. 2: mode coverage of pi* and both KL divergences to pi* vs alpha (task i, and task ii when built), and the
claims on them (paired by seed) with the intervals their verdicts take."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mcpo.figures import fig2, fig2_table
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
claims = read_csv(snakemake.input.claims, float_precision="round_trip")
table = fig2_table(read_csv(snakemake.input.tidy), claims)
save(fig2(table), table, snakemake.output.pdf)
