"""The label manifest of a remote cohort, from its download manifest."""
from repro.jobs import Job
from repro.wsi.cohort import write_remote_labels

job = Job.from_snakemake(snakemake)
write_remote_labels(snakemake.input.manifest, snakemake.output.manifest)
