"""Oracles and random scores of one task on every cross-validation unit (the same units as the methods)."""
import pandas as pd

from repro.jobs import Job
from repro.methods.mil_train import load_prepared
from repro.papers.tmevolve.experiment import oracle_summaries, train_seed

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
seeds = {(r, f): train_seed(job, cohort=wc.cohort, task=wc.task, fold=f, repeat=r)
         for r in range(job.cfg["n_repeats"]) for f in range(job.cfg["n_folds"])}
summaries = oracle_summaries(load_prepared(snakemake.input.dataset),
                             pd.read_csv(snakemake.input.folds, dtype={"slide_id": str}), wc.task, seeds)
for name, path in zip(snakemake.params.oracles, snakemake.output):
    job.write_metrics(path, summaries.get(name) or {"mean": None, "sd": None, "folds": [], "note": "not defined for this task"})
