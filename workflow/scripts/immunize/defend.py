"""Immunize the released extractor of one seed with one defence; record its curvature before and after."""
import numpy as np

from repro.io import atomic_path
from repro.jobs import Job
from repro.papers.immunize.experiment import defend

job = Job.from_snakemake(snakemake)  # noqa: F821
seed = int(job.wildcards["seed"])
# data and immunization seeds derive from the seed only: every defence of a seed is paired
theta, info = defend(job.cfg, job.wildcards["method"], job.seed_for("immunize_data", seed=seed),
                     job.seed_for("immunize_train", seed=seed))
with atomic_path(snakemake.output.theta) as tmp:  # noqa: F821
    with open(tmp, "wb") as fh:
        np.save(fh, theta.numpy())
job.write_metrics(snakemake.output.info, info)  # noqa: F821
