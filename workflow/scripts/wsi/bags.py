"""Gather a cohort's per-slide features (and ground-truth patch types) into one bags file."""
from pathlib import Path

from repro.jobs import Job
from repro.wsi.bags import build_bags

job = Job.from_snakemake(snakemake)
inp, out = snakemake.input, snakemake.output
summary = build_bags({Path(p).stem: p for p in inp.features}, out.bags, cohort=snakemake.wildcards.cohort,
                     truth_files={Path(p).stem: p for p in inp.truth})
job.write_metrics(out.summary, summary)
