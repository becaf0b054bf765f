"""Fig. 3 of gtp: score vs planning budget, and the claims on it (GTP minus a baseline, paired by seed) with the intervals their
verdicts are decided on (see repro.papers.gtp.figures.fig3)."""
from pathlib import Path

import pandas as pd

from repro.claims import load_claims
from repro.figures.style import save
from repro.io import read_json
from repro.jobs import Job
from repro.papers.gtp.figures import fig3, fig3_table

job = Job.from_snakemake(snakemake)
# the claims file of the checkout and the metrics the aggregate job writes beside its tidy tables (not inputs of
# the rule: it reruns with the tidy table, which that job writes with them)
workflow = Path(snakemake.scriptdir).parents[1]
claims = load_claims(workflow / "claims/gtp.yaml", workflow / "schemas/claims.schema.yaml")
metrics = read_json(Path(snakemake.input.tidy).with_name("metrics.json"))
table = fig3_table(pd.read_csv(snakemake.input.tidy), job.cfg["main_n_samples"], claims, metrics)
save(fig3(table), table, snakemake.output.pdf)
