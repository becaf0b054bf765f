"""driftbench_release: read a released folder (briefs, transcripts, judge records, KBV summary) into one file."""

import logging

from repro.io import write_json
from repro.jobs import Job
from repro.papers.driftbench.experiment import release_dict

Job.from_snakemake(snakemake)
release = release_dict(snakemake.params.folder)
logging.getLogger("driftbench.release").info("read %s", release["layout"])
write_json(snakemake.output.release, release)
