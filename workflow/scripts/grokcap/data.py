"""grokcap_data: the modular split and the random-label data of one seed replicate."""

import numpy as np

from repro.io import atomic_path
from repro.jobs import Job
from repro.papers.grokcap.synth import seed_dataset

job = Job.from_snakemake(snakemake)
arrays = seed_dataset(p=job.cfg["p"], operation=job.cfg["operation"], train_fraction=job.cfg["train_fraction"],
                      seed=job.seed, labels=job.cfg["labels"])
with atomic_path(snakemake.output.data) as tmp:
    np.savez(tmp, **arrays)
