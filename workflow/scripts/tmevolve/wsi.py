"""The WSI stage on the spatial cohort's slides: tissue, patches and features of every slide, one bags file."""

from pathlib import Path

from repro.jobs import Job
from repro.wsi.pipeline import extract_cohort

job = Job.from_snakemake(snakemake)
inp, out, params = snakemake.input, snakemake.output, snakemake.params
# one seed per encoder (a randomly initialised encoder is then the same on every slide), as in rules/wsi.smk
summary = extract_cohort(
    {Path(p).stem: p for p in inp.slides},
    out.bags,
    job.cfg,
    params.encoder,
    cohort=snakemake.wildcards.cohort,
    truth={Path(p).stem: p for p in inp.truth},
    device=params.device,
    seed=job.seed_for("wsi_encoder", encoder=params.encoder),
    workers=job.threads,
)
job.write_metrics(out.summary, summary)
