"""Task (i): every alpha, the reverse-KL baseline, the oracle pi* and the floor pi_ref on one seed's task."""
from repro.jobs import Job
from repro.papers.mcpo.experiment import run_seed

job = Job.from_snakemake(snakemake)
seed = int(job.wildcards["seed"])
# one task instance and one sampling stream per unit, shared by every alpha and baseline: paired
data_seed, train_seed = job.seed_for("mcpo_task", seed=seed), job.seed_for("mcpo_train", seed=seed)
job.write_metrics(snakemake.output.run, run_seed(job.cfg, data_seed, train_seed))
