"""toolgap_probes: cognition (necessity) and action (call) probes at every layer and last-token
position, the cosine of their directions, and the trajectory split of the mismatched items."""

import numpy as np

from repro.io import read_json
from repro.jobs import Job
from repro.papers.toolgap.experiment import probe_analysis

job = Job.from_snakemake(snakemake)  # noqa: F821
run = read_json(snakemake.input.run)  # noqa: F821
with np.load(snakemake.input.hidden) as npz:  # noqa: F821
    hidden = npz["hidden"].astype(np.float32)
# the same split seed for every model and task
out = probe_analysis(hidden, run["records"], job.cfg, seed=job.seed_for("toolgap-probe"))
job.write_metrics(snakemake.output.probes, {"model": run["model"], "task": run["task"], **out})  # noqa: F821
