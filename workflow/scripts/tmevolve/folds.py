"""Repeated cross-validation folds of the cohort (one assignment per repeat, shared by every task and method)."""

from repro.io import atomic_open
from repro.jobs import Job
from repro.papers.tmevolve.experiment import make_repeated_folds
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
folds = make_repeated_folds(read_csv(snakemake.input.manifest, dtype={"slide_id": str}), job.cfg["n_folds"],
                            job.cfg["n_repeats"], job.seed)
with atomic_open(snakemake.output.folds, "w", newline="") as fh:
    folds.to_csv(fh, index=False)
