"""The spatial cohort: whole-slide images whose labels are set by the arrangement of the patches, truth and manifest."""

from pathlib import Path

from repro.jobs import Job
from repro.papers.tmevolve.synth import write_spatial_slides

job = Job.from_snakemake(snakemake)
out = snakemake.output
write_spatial_slides(
    job.cfg["spatial"],
    seed=job.seed,
    patch_um=snakemake.params.patch_um,
    slides_dir=Path(out.slides[0]).parent,
    truth_dir=Path(out.truth[0]).parent,
    manifest_path=out.manifest,
    workers=job.threads,
)
