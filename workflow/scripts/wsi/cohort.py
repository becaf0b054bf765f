"""Draw the synthetic cohort: pyramidal TIFF slides, ground-truth maps, manifest with labels."""
from pathlib import Path

from repro.jobs import Job
from repro.wsi.synth import generate_cohort

job = Job.from_snakemake(snakemake)
out = snakemake.output
generate_cohort(job.cfg, seed=job.seed, slides_dir=Path(out.slides[0]).parent, truth_dir=Path(out.truth[0]).parent,
                manifest_path=out.manifest, workers=job.threads)
