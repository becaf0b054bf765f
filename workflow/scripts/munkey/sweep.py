"""Forget accuracy and MIA AUC of MUNKEY vs the fraction of keys deleted, against the memory-model oracle."""
from repro.data.sidecar import verify_inputs
from repro.jobs import Job
from repro.papers.munkey.experiment import run_sweep

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched input is checked against its sidecar first
regime, seed = job.wildcards["regime"], int(job.wildcards["seed"])
rows = run_sweep(job.cfg, regime, job.seed_for("munkey_data", regime=regime, seed=seed),
                 job.seed_for("munkey_train", regime=regime, seed=seed),
                 path=snakemake.input.get("data"))
job.write_metrics(snakemake.output.sweep, {"rows": rows})
