"""Fig. 1 (harmful accuracy vs adversary steps), Fig. 2 (curvature before/after; estimator scaling) and Table 1."""

from repro.figures.style import save
from repro.tables import save_table
from repro.jobs import Job
from repro.papers.immunize.experiment import table1
from repro.papers.immunize.figures import fig1, fig1_table, fig2, fig2_table
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
inp, out = snakemake.input, snakemake.output
tidy = read_csv(inp.tidy)
table = fig1_table(read_csv(inp.curves))
save(fig1(table), table, out.fig1)
table = fig2_table(tidy, read_csv(inp.scaling))
save(fig2(table), table, out.fig2)
save_table(table1(tidy), out.table_csv,
           title="immunize: utility, downstream trainability, cost and relearning per model and defence (mean ± sd over seeds)")
