"""Fig. 1: TR@1 / IR@1 against the number of distilled pairs, and the recall claims' paired differences."""

from repro.claims import load_claims
from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mdadd import figures
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
table = figures.fig1_table(read_csv(snakemake.input.tidy), read_csv(snakemake.input.claims, float_precision="round_trip"),
                           load_claims(snakemake.input.paper_claims, snakemake.input.schema))
save(figures.fig1(table), table, snakemake.output.pdf)
