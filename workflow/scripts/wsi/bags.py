"""Gather a cohort's per-slide features (and ground-truth patch types) into one bags file."""
from pathlib import Path

from repro.jobs import Job
from repro.wsi.bags import build_bags

job = Job.from_snakemake(snakemake)  # noqa: F821 - injected by Snakemake
inp, out = snakemake.input, snakemake.output  # noqa: F821
summary = build_bags({Path(p).stem: p for p in inp.features}, out.bags, cohort=snakemake.wildcards.cohort,  # noqa: F821
                     truth_files={Path(p).stem: p for p in inp.truth})
job.write_metrics(out.summary, summary)
