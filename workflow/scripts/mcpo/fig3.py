"""Fig. 3: the safety frontier of task (iii), harmful refusal vs benign over-refusal across alpha, per reference model,
and the claims on how the dial moves it (paired by seed) with the intervals their verdicts take."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mcpo.figures import fig3, frontier_table
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
claims = read_csv(snakemake.input.claims, float_precision="round_trip")
table = frontier_table(read_csv(snakemake.input.tidy), claims)
save(fig3(table), table, snakemake.output.pdf)
