"""rlqgrad_train: train the hybrid QNN with one method for a fixed number of updates."""
from repro.jobs import Job
from repro.methods.rlqgrad import config_from, read_dataset, train_qnn
from repro.seeding import job_seed

job = Job.from_snakemake(snakemake)  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
# every method sees the same draws (paired comparison): the seed leaves the method out
seed = job_seed(snakemake.config["seed"], job.rule, dataset=wc.dataset, n=wc.n, seed=wc.seed)  # noqa: F821
cfg = config_from(job.cfg["model"], n_qubits=int(wc.n), n_layers=job.cfg["n_layers"], steps=job.cfg["steps"])
result = train_qnn(wc.method, read_dataset(snakemake.input.data), cfg, seed=seed, dataset=wc.dataset)  # noqa: F821
job.write_metrics(snakemake.output.metrics, {**result, "seed_index": int(wc.seed), "seed_used": seed})  # noqa: F821
