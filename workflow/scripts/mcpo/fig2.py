"""Fig. 2: mode coverage of pi* and both KL divergences to pi* vs alpha (task i, and task ii when built)."""
import pandas as pd

from repro.figures.style import save
from repro.jobs import Job
from repro.papers.mcpo.figures import curve_table, fig2

job = Job.from_snakemake(snakemake)
tidy = pd.read_csv(snakemake.input.tidy)
metrics = {"bandit": ["coverage", "kl_reverse", "kl_forward"],
           "arithmetic": ["coverage", "form_tv", "form_entropy", "kl_reverse", "kl_forward"]}
table = pd.concat([curve_table(tidy, metrics[task], task) for task in metrics if task in set(tidy.task)],
                  ignore_index=True)
save(fig2(table), table, snakemake.output.pdf)
