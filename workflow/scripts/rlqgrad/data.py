"""rlqgrad_data: a scikit-learn dataset, standardised, split 80/20 and reduced by PCA."""
from repro.jobs import Job
from repro.methods.rlqgrad import load_dataset, save_dataset

job = Job.from_snakemake(snakemake)  # noqa: F821
data = load_dataset(snakemake.wildcards.dataset, pca_dim=job.cfg["pca_dim"], seed=job.seed)  # noqa: F821
save_dataset(data, snakemake.output.data)  # noqa: F821
