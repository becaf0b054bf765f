"""Bags of the WSI stage -> one training-ready file (features reduced, grid graphs built)."""
from repro.jobs import Job
from repro.methods.mil_train import prepare_cohort, save_prepared

job = Job.from_snakemake(snakemake)
blob = prepare_cohort(snakemake.input.bags, snakemake.input.manifest, pca_dim=job.cfg["pca_dim"],
                      knn_k=job.cfg["knn_k"], seed=job.seed)
save_prepared(blob, snakemake.output.dataset)
