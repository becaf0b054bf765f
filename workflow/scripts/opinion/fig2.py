"""opinion_fig2: rate of dishonest stances vs alpha (belief-probe lying rate; contrary-to-signal rate)."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.opinion.figures import fig2, sweep_table
from repro.tableio import read_csv

Job.from_snakemake(snakemake)
results = read_csv(snakemake.input.results)
table = pd.concat([sweep_table(results, "lying_rate"), sweep_table(results, "contrary_rate")], ignore_index=True)
save(fig2(table), table, snakemake.output.pdf)
