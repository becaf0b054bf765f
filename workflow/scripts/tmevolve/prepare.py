"""Bags of the WSI stage -> one training-ready file (features reduced, grid graphs built)."""
import torch

from repro.io import atomic_path
from repro.jobs import Job
from repro.methods.mil_train import prepare_cohort

job = Job.from_snakemake(snakemake)
blob = prepare_cohort(snakemake.input.bags, snakemake.input.manifest, pca_dim=job.cfg["pca_dim"],
                      knn_k=job.cfg["knn_k"], seed=job.seed)
with atomic_path(snakemake.output.dataset) as tmp:
    torch.save(blob, tmp)
