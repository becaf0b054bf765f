"""driftbench_release: read a released folder (briefs, transcripts, scores, KBV summary) into one file."""

from repro.io import write_json
from repro.jobs import Job
from repro.papers.driftbench.experiment import release_dict

Job.from_snakemake(snakemake)
write_json(snakemake.output.release, release_dict(snakemake.params.folder))
