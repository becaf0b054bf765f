"""Every recommender, the oracle and run-every-candidate on one seed's leaderboard."""
import numpy as np

import repro.methods.modellens  # noqa: F401  (registers "modellens")
from repro.jobs import Job
from repro.papers.modellens.experiment import lookup_embedding, run_seed

job = Job.from_snakemake(snakemake)  # noqa: F821
seed = int(job.wildcards["seed"])
# one leaderboard and one method seed per unit, shared by every method: the comparison is paired
data_seed, method_seed = job.seed_for("modellens_data", seed=seed), job.seed_for("modellens_method", seed=seed)
table = np.load(snakemake.input.emb)  # noqa: F821
out = run_seed(job.cfg, data_seed, method_seed, lookup_embedding(table["texts"], table["emb"]))
job.write_metrics(snakemake.output.run, out)  # noqa: F821
