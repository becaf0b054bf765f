"""Every recommender (+ oracle and run-every-candidate on synthetic data) on one seed's leaderboard or dump split."""
import repro.methods.modellens  # noqa: F401  (registers "modellens")
from repro.data.sidecar import verify_inputs
from repro.jobs import Job
from repro.papers.modellens.experiment import run_seed, unit_inputs
from repro.papers.modellens.real import read_real, run_real_seed

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched input is checked against its sidecar first
# one leaderboard (or split) and one method seed per unit, shared by every method: the comparison is paired
data_seed, method_seed, embed = unit_inputs(job, snakemake.input.emb)
if snakemake.params.source == "remote":
    out = run_real_seed(read_real(snakemake.input.dump[0]), job.cfg, data_seed, method_seed, embed)
else:
    out = run_seed(job.cfg, data_seed, method_seed, embed)
job.write_metrics(snakemake.output.run, out)
