"""toolgap_fig2: probe accuracy (cognition, action) and the cosine of their directions by layer, and the claims on
them with the intervals their verdicts are decided on."""

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.toolgap.figures import fig2, fig2_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
claims = read_csv(snakemake.input.claims, float_precision="round_trip")
table = fig2_table(read_csv(snakemake.input.layers), claims)
save(fig2(table), table, snakemake.output.pdf)
