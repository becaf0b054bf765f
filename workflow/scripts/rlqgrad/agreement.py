"""rlqgrad_agreement: backprop, parameter shift and adjoint on random circuits (complex128)."""
from repro.jobs import Job
from repro.papers.rlqgrad.experiment import gradient_agreement

job = Job.from_snakemake(snakemake)
job.write_metrics(snakemake.output.metrics, gradient_agreement(**job.cfg, seed=job.seed))
