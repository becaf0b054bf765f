"""Train one method on one task for one cross-validation fold; predict the held-out fold."""
import pandas as pd

from repro.jobs import Job
from repro.methods.mil_train import load_prepared
from repro.papers.tmevolve.experiment import load_concepts, save_fold, train_fold, train_seed

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
seed = train_seed(job, cohort=wc.cohort, task=wc.task, fold=int(wc.fold))  # the same for every method
result = train_fold(wc.method, wc.task, load_prepared(snakemake.input.dataset),
                    pd.read_csv(snakemake.input.folds, dtype={"slide_id": str}), int(wc.fold), job.cfg,
                    concept_emb=load_concepts(snakemake.input.concepts), seed=seed,
                    device=snakemake.config["device"])
record = save_fold(result, snakemake.output.model, method=wc.method, task=wc.task, fold=int(wc.fold), seed=seed)
job.write_metrics(snakemake.output.metrics, record)
