"""Attack one immunized extractor in the three settings (open weights, service, relearning); utility and downstream."""
import numpy as np
import torch

from repro.io import read_json
from repro.jobs import Job
from repro.papers.immunize.experiment import attack

job = Job.from_snakemake(snakemake)  # noqa: F821
seed = int(job.wildcards["seed"])
theta = torch.as_tensor(np.load(snakemake.input.theta))  # noqa: F821
out = attack(job.cfg, theta, job.seed_for("immunize_data", seed=seed), job.seed_for("immunize_attack", seed=seed))
job.write_metrics(snakemake.output.unit, {"defend": read_json(snakemake.input.info), "attack": out,  # noqa: F821
                                          "checkpoints": job.cfg["adversary"]["checkpoints"]})
