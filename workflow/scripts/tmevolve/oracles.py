"""Oracles and random scores of every task of one cohort on every cross-validation unit (the same units as the methods)."""

from repro.jobs import Job
from repro.methods.mil_train import load_prepared
from repro.papers.tmevolve.experiment import oracle_summaries, train_seed
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
cohort = snakemake.wildcards.cohort
data = load_prepared(snakemake.input.dataset)
folds = read_csv(snakemake.input.folds, dtype={"slide_id": str})
out = {}
for task in job.cfg["tasks"]:
    seeds = {(r, f): train_seed(job, cohort=cohort, task=task, fold=f, repeat=r)
             for r in range(job.cfg["n_repeats"]) for f in range(job.cfg["n_folds"])}
    summaries = oracle_summaries(data, folds, task, seeds)
    out[task] = {name: summaries.get(name) or {"mean": None, "sd": None, "folds": [], "note": "not defined for this task"}
                 for name in snakemake.params.oracles}
job.write_metrics(snakemake.output.oracles, out)
