"""ModelLens with one part removed (each variant of the preset's ablations) on one seed: same data, same seed."""
import repro.methods.modellens  # noqa: F401  (registers "modellens")
from repro.data.sidecar import verify_inputs
from repro.jobs import Job
from repro.papers.modellens.experiment import prepare_seed, run_ablations, unit_inputs
from repro.papers.modellens.real import prepare_real, read_real

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched input is checked against its sidecar first
data_seed, method_seed, embed = unit_inputs(job, snakemake.input.emb)
if snakemake.params.source == "remote":
    _, problem, _, evaluate = prepare_real(read_real(snakemake.input.dump[0]), job.cfg, data_seed, embed)
else:
    _, problem, _, evaluate = prepare_seed(job.cfg, data_seed, embed)
job.write_metrics(snakemake.output.run, {"data_seed": data_seed, "method_seed": method_seed,
                                         "metrics": run_ablations(job.cfg, problem, evaluate, method_seed)})
