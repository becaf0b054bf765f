"""Pretrain the backbone of one (sequence, seed) on the sequence's base task."""
import torch

from repro.data.sidecar import verify_inputs
from repro.io import atomic_path
from repro.jobs import Job
from repro.papers.m2le.experiment import build_sequence, pretrain_backbone

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched input is checked against its sidecar first
sequence, seed = job.wildcards["sequence"], int(job.wildcards["seed"])
seq = build_sequence(job.cfg, sequence, job.seed_for("m2le_data", sequence=sequence, seed=seed),
                     snakemake.input.get("data"))
state, stats = pretrain_backbone(job.cfg, seq, job.seed_for("m2le_pretrain", sequence=sequence, seed=seed))
with atomic_path(snakemake.output.backbone) as tmp:
    torch.save({"state": state, "stats": stats}, tmp)
