"""matt_matched: one arm of the paper's comparison (matt: FOCUS then AIM only; focus_ntp: FOCUS then
next-token training of the new rows) for the calibrated steps, evaluated straight after."""

from pathlib import Path

from repro.io import read_json, write_json
from repro.jobs import Job
from repro.papers.matt.experiment import load_source
from repro.papers.matt.matched import run_arm

job = Job.from_snakemake(snakemake)
job.limit_threads()
data = read_json(snakemake.input.data)
data["heldout"] = read_json(snakemake.input.scores)["heldout"]
src = load_source(job.cfg["kind"], Path(snakemake.input.model).parent, Path(snakemake.input.scores).parent)
# the seed comes from the seed wildcard only (the same stream as the token-budget variant): both arms paired
unit = int(job.wildcards["seed"])
calibration = read_json(snakemake.input.calibration)
run = run_arm(src, job.wildcards["arm"], data, job.cfg, calibration, job.seed_for("matt-transfer", seed=unit))
write_json(snakemake.output.run, {"unit": unit, **run})
