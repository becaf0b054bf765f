"""Distil (or select) n pairs with one registered method in the frozen feature space.

The distillation seed comes from the unit (distillation seed ``k`` of the ``seed`` wildcard), never
from the method: every method starts from the same random real pairs and students for the same k.
"""
from repro.jobs import Job
from repro.methods.distill import distill, standardised
from repro.methods.distill.features import read_features

job = Job.from_snakemake(snakemake)
train, = standardised(read_features(snakemake.input.features)["train"])
n = snakemake.wildcards.n_pairs
seed = job.seed_for("mdadd-distill", seed=int(snakemake.wildcards.seed))
dset = distill(snakemake.wildcards.method, train, 0 if n == "all" else int(n), job.cfg, seed=seed)
dset.save(snakemake.output.distilled)
