"""Every method over one (sequence, seed): M²LE, HIM, scalar merges, O-LoRA, EWC, sequential, joint."""
from repro.data.sidecar import verify_inputs
from repro.io import load_torch
from repro.jobs import Job
from repro.papers.m2le.experiment import run_unit

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched input is checked against its sidecar first
sequence, seed = job.wildcards["sequence"], int(job.wildcards["seed"])
backbone = load_torch(snakemake.input.backbone)  # weights_only=True; a damaged file is named
# the data and training seeds name the unit, never the method: every method is paired
out = run_unit(job.cfg, sequence, backbone["state"], job.seed_for("m2le_data", sequence=sequence, seed=seed),
               job.seed_for("m2le_train", sequence=sequence, seed=seed), snakemake.input.get("data"))
job.write_metrics(snakemake.output.run, out | {"backbone": backbone["stats"]})
