"""Every method of one unit (regime x forget set x seed): MUNKEY, kNN, post-hoc baselines, both oracles."""
from repro.data.sidecar import verify_inputs
from repro.jobs import Job
from repro.papers.munkey.experiment import run_unit

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched input is checked against its sidecar first
regime, seed = job.wildcards["regime"], int(job.wildcards["seed"])
# one data draw and one training seed per (regime, seed), shared by every method and forget set: paired
out = run_unit(job.cfg, regime, job.wildcards["forget_set"], job.seed_for("munkey_data", regime=regime, seed=seed),
               job.seed_for("munkey_train", regime=regime, seed=seed),
               path=snakemake.input.get("data"))
job.write_metrics(snakemake.output.run, out)
