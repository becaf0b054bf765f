"""Patch grid of one slide (CLAM/TRIDENT coords HDF5) and its preview PNG."""
from repro.data.sidecar import verify_inputs
from repro.jobs import Job
from repro.wsi.pipeline import patch_step

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched slide is checked against its sidecar first
inp, out = snakemake.input, snakemake.output
patch_step(inp.slide, inp.mask, out.coords, out.preview, job.cfg)
