"""grokcap_train: one model (task x width x seed) trained to its 99% thresholds or the step cap."""

import numpy as np

from repro.jobs import Job
from repro.papers.grokcap.experiment import run_grokcap

job = Job.from_snakemake(snakemake)
with np.load(snakemake.input.data) as npz:
    data = dict(npz)
result = run_grokcap(job.cfg, task=job.wildcards["task"], width=int(job.wildcards["width"]),
                     replicate=int(job.wildcards["seed"]), data=data, seed=job.seed,
                     device=snakemake.params.device, where=f"grokcap.{job.scale}")
job.write_metrics(snakemake.output.run, result)
