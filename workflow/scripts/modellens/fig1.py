"""Fig. 1: NDCG@K by seen/unseen model x dataset split."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.modellens.figures import fig1, fig1_table
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
table = fig1_table(read_csv(snakemake.input.tidy), job.cfg["main_k"])
save(fig1(table, job.cfg["main_k"]), table, snakemake.output.pdf)
