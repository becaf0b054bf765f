"""Block size 1: the group mirror against the Gaussian mirror computed feature by feature."""
import numpy as np

from repro.jobs import Job
from repro.papers.groupfdr.experiment import block1_check

job = Job.from_snakemake(snakemake)
result = block1_check(job.cfg["n"], job.cfg["p"], rng=np.random.default_rng(job.seed))
job.write_metrics(snakemake.output.check, result)
