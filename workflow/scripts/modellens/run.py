"""Every recommender (+ oracle and run-every-candidate on synthetic data) on one seed's leaderboard or dump split."""
import numpy as np

import repro.methods.modellens  # noqa: F401  (registers "modellens")
from repro.jobs import Job
from repro.papers.modellens.experiment import lookup_embedding, run_seed
from repro.papers.modellens.real import read_real, run_real_seed

job = Job.from_snakemake(snakemake)  # noqa: F821
seed = int(job.wildcards["seed"])
# one leaderboard (or split) and one method seed per unit, shared by every method: the comparison is paired
data_seed, method_seed = job.seed_for("modellens_data", seed=seed), job.seed_for("modellens_method", seed=seed)
table = np.load(snakemake.input.emb)  # noqa: F821
embed = lookup_embedding(table["texts"], table["emb"])
if snakemake.params.source == "remote":  # noqa: F821
    out = run_real_seed(read_real(snakemake.input.dump[0]), job.cfg, data_seed, method_seed, embed)  # noqa: F821
else:
    out = run_seed(job.cfg, data_seed, method_seed, embed)
job.write_metrics(snakemake.output.run, out)  # noqa: F821
