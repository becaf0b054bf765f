"""Fig. 1: FDR and power against correlation and amplitude."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.groupfdr.figures import fig1
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
# round_trip: the claims' bounds as the aggregate wrote them, to the last bit (the default parser may miss one)
table = read_csv(snakemake.input.summary, float_precision="round_trip").dropna(subset=["sweep"])
save(fig1(table, job.cfg["figure_q"]), table, snakemake.output.pdf)
