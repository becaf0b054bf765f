"""Tissue mask of one slide at a low resolution."""
from repro.jobs import Job
from repro.wsi.pipeline import tissue_step

job = Job.from_snakemake(snakemake)
tissue_step(snakemake.input.slide, snakemake.output.mask, job.cfg)
