"""Fixed cross-validation folds of the cohort (one assignment for every task and method)."""
import pandas as pd

from repro.io import atomic_open
from repro.jobs import Job
from repro.methods.mil_train import make_folds

job = Job.from_snakemake(snakemake)
folds = make_folds(pd.read_csv(snakemake.input.manifest, dtype={"slide_id": str}), job.cfg["n_folds"], job.seed)
with atomic_open(snakemake.output.folds, "w", newline="") as fh:
    folds.to_csv(fh, index=False)
