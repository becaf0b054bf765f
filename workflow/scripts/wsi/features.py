"""Patch features of one slide with one encoder (features + coords HDF5)."""
from repro.data.sidecar import verify_inputs
from repro.jobs import Job
from repro.wsi.pipeline import features_step

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched slide is checked against its sidecar first
smk = snakemake
encoder = smk.wildcards.encoder
# One seed per encoder (not per slide): a randomly initialised encoder must be the same on every slide.
features_step(smk.input.slide, smk.input.coords, smk.output.features, encoder, job.cfg, device=smk.params.device,
              seed=job.seed_for("wsi_encoder", encoder=encoder), threads=job.threads)
