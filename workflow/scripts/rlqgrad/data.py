"""rlqgrad_data: a scikit-learn dataset, standardised, split 80/20 and reduced by PCA."""
from repro.jobs import Job
from repro.methods.rlqgrad import load_dataset, save_dataset

job = Job.from_snakemake(snakemake)
data = load_dataset(snakemake.wildcards.dataset, pca_dim=job.cfg["pca_dim"], seed=job.seed)
save_dataset(data, snakemake.output.data)
