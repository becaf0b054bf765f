"""opinion_fig3: attention vs node centrality (Spearman rho per graph and over graphs, trained vs untrained), with
the intervals the claims decide on."""
from repro.claims import load_claims
from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job
from repro.papers.opinion.figures import fig3, fig3_table

Job.from_snakemake(snakemake)
inp = snakemake.input
table = fig3_table(read_json(inp.metrics), load_claims(inp.claims, inp.schema))
save(fig3(table), table, snakemake.output.pdf)
