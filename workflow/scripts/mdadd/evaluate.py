"""Train retrieval students on a distilled set from unseen (and seen) initialisations; TR/IR@K on test."""
from repro.jobs import Job
from repro.methods.distill import DistilledSet, standardised
from repro.methods.distill.features import read_features
from repro.methods.distill.student import evaluate_distilled, evaluation_inits, student_config

job = Job.from_snakemake(snakemake)
feats = read_features(snakemake.input.features)
_, test = standardised(feats["train"], feats["test"])
dset = DistilledSet.load(snakemake.input.distilled)
e = job.cfg["eval"]
full = snakemake.wildcards.method == "full"
k = int(snakemake.wildcards.seed)
# unit k: every method and size is evaluated from the same unseen initialisations and data order
seed = job.seed_for("mdadd-eval", seed=k)
recall = evaluate_distilled(dset, test, student_config(job.cfg), seed=seed, n_unseen=e["unseen_inits"],
                            n_seen=e["seen_inits"], lr=e["lr"], batch_size=e["batch_size"],
                            steps=e["full_steps"] if full else e["steps"])
inits = evaluation_inits(dset, seed=seed, n_unseen=e["unseen_inits"], n_seen=e["seen_inits"])
job.write_metrics(snakemake.output.metrics, {"method": snakemake.wildcards.method, "n_pairs": len(dset),
                                             "distill_seed": k, "inits": inits, "recall": recall,
                                             "objective_trace": dset.trace})
