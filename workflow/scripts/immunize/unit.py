"""One seed: per model, the released extractor, every defence and every attack; the estimator scaling."""
import numpy as np

from repro.io import atomic_path
from repro.jobs import Job
from repro.papers.immunize.experiment import run_unit

job = Job.from_snakemake(snakemake)
seed = int(job.wildcards["seed"])
# data, immunization and attack seeds derive from the seed only: every model and defence of a seed is paired
record, thetas = run_unit(job.cfg, job.seed_for("immunize_data", seed=seed), job.seed_for("immunize_train", seed=seed),
                          job.seed_for("immunize_attack", seed=seed))
with atomic_path(snakemake.output.thetas) as tmp:
    with open(tmp, "wb") as fh:
        np.savez(fh, **thetas)
job.write_metrics(snakemake.output.unit, record)
