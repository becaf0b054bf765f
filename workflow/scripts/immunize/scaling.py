"""Lanczos extremal eigenvalues vs the exact Hessian, error and seconds, as the MLP grows."""
from repro.jobs import Job
from repro.papers.immunize.experiment import run_scaling

job = Job.from_snakemake(snakemake)  # noqa: F821
seed = int(job.wildcards["seed"])
rows = run_scaling(job.cfg, job.seed_for("immunize_data", seed=seed), job.seed_for("immunize_train", seed=seed))
job.write_metrics(snakemake.output.rows, {"rows": rows})  # noqa: F821
