"""Runtime of group GM vs knockpy's group knockoffs on the same simulated data (one run, a ratio)."""
from repro.jobs import Job
from repro.papers.groupfdr.experiment import runtime_benchmark

job = Job.from_snakemake(snakemake)
job.write_metrics(snakemake.output.runtime, runtime_benchmark(job.cfg, seed=job.seed))
