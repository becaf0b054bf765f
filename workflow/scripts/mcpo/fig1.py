"""Fig. 1: pass@1 and pass@k vs alpha (task i, and task ii when built), with the reverse-KL baseline, oracle pi* and floor pi_ref."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mcpo.figures import curve_table, fig1

job = Job.from_snakemake(snakemake)
k = job.cfg["claim_k"]
tidy = pd.read_csv(snakemake.input.tidy)
table = pd.concat([curve_table(tidy, ["pass1", f"pass{k}"], task) for task in ("bandit", "arithmetic")
                   if task in set(tidy.task)], ignore_index=True)
save(fig1(table, k), table, snakemake.output.pdf)
