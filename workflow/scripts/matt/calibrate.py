"""matt_calibrate: CPU-seconds per step of AIM and of next-token training on the source model, and the
next-token steps that cost what the AIM arm's steps cost (the paper's comparison at equal compute)."""

from pathlib import Path

from repro.io import read_json, write_json
from repro.jobs import Job
from repro.papers.matt.experiment import load_source
from repro.papers.matt.matched import calibrate

job = Job.from_snakemake(snakemake)
job.limit_threads()
data = read_json(snakemake.input.data)
src = load_source(job.cfg["kind"], Path(snakemake.input.model).parent, Path(snakemake.input.scores).parent)
write_json(snakemake.output.calibration, calibrate(src, data, job.cfg, job.seed_for("matt-calibrate")))
