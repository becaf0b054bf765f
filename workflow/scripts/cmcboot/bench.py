"""cmcboot benchmark: wall time of the model-based bootstrap, n_boot chains of n_steps steps."""
from repro.io import write_json
from repro.jobs import Job
from repro.papers.cmcboot.experiment import bench_model_bootstrap

job = Job.from_snakemake(snakemake)
write_json(snakemake.output.bench, bench_model_bootstrap(snakemake.params.n_boot, snakemake.params.n_steps, seed=job.seed))
