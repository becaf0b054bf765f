"""matt_transfer: one method (mean, fvt, focus, matt) and one seed: initialise the new embeddings,
(matt: AIM warm-up), next-token training to each budget, evaluation at each."""

from pathlib import Path

from repro.io import read_json, write_json
from repro.jobs import Job
from repro.papers.matt.experiment import load_source, run_method

job = Job.from_snakemake(snakemake)
job.limit_threads()
data = read_json(snakemake.input.data)
source = read_json(snakemake.input.scores)
data["heldout"] = source["heldout"]
tok_dir = Path(snakemake.input.scores).parent
src = load_source(job.cfg["kind"], Path(snakemake.input.model).parent, tok_dir)
# the seed comes from the seed wildcard only: every method sees the same batches
unit = int(job.wildcards["seed"])
run = run_method(src, job.wildcards["method"], data, job.cfg, job.seed_for("matt-transfer", seed=unit))
write_json(snakemake.output.run, {"unit": unit, **run})
