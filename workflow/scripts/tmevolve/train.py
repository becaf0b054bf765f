"""Train the runs of one job (one method, or every run of a task) on every fold of one repeat; predict the held-out folds."""

from repro.jobs import Job
from repro.methods.mil_train import load_prepared
from repro.papers.tmevolve.experiment import load_concepts, save_repeat, train_repeat, train_seed
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
repeat = int(wc.repeat)
# the seed of a unit is the same for every method, ablation and control
seeds = {f: train_seed(job, cohort=wc.cohort, task=wc.task, fold=f, repeat=repeat) for f in range(job.cfg["n_folds"])}
data = load_prepared(snakemake.input.dataset)
folds = read_csv(snakemake.input.folds, dtype={"slide_id": str})
concepts = load_concepts(snakemake.input.concepts)
results = {method: train_repeat(method, wc.task, data, folds, repeat, job.cfg, seeds=seeds, concept_emb=concepts,
                                device=snakemake.config["device"])
           for method in snakemake.params.methods}
job.write_metrics(snakemake.output.metrics, save_repeat(results, snakemake.output.model, task=wc.task, repeat=repeat,
                                                        seeds=seeds))
