"""cmcboot benchmark: wall time of the model-based bootstrap, n_boot chains of n_steps steps."""
from repro.experiments.cmcboot import bench_model_bootstrap
from repro.jobs import Job
from repro.io import write_json

job = Job.from_snakemake(snakemake)
write_json(snakemake.output.bench, bench_model_bootstrap(snakemake.params.n_boot, snakemake.params.n_steps, seed=job.seed))
