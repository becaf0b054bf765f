"""Patch grid of one slide (CLAM/TRIDENT coords HDF5) and its preview PNG."""
from repro.jobs import Job
from repro.wsi.pipeline import patch_step

job = Job.from_snakemake(snakemake)
inp, out = snakemake.input, snakemake.output
patch_step(inp.slide, inp.mask, out.coords, out.preview, job.cfg)
