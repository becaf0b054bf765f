"""Tissue mask of one slide at a low resolution."""
from repro.data.sidecar import verify_inputs
from repro.jobs import Job
from repro.wsi.pipeline import tissue_step

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched slide is checked against its sidecar first
tissue_step(snakemake.input.slide, snakemake.output.mask, job.cfg)
