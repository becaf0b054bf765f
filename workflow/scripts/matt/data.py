"""matt_data: English and Ukrainian texts (offline, see repro.papers.matt.corpus) and the evaluation items."""

from repro.io import write_json
from repro.jobs import Job
from repro.papers.matt.corpus import build_data

job = Job.from_snakemake(snakemake)
write_json(snakemake.output.data, build_data(job.cfg, job.seed_for("matt-data")))
