"""rlqgrad_train: train the hybrid QNN with one method for a fixed number of updates."""
from repro.jobs import Job
from repro.methods.rlqgrad import config_from, read_dataset, train_qnn

job = Job.from_snakemake(snakemake)  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
cfg = config_from(job.cfg["model"], n_qubits=int(wc.n), n_layers=job.cfg["n_layers"], steps=job.cfg["steps"])
result = train_qnn(wc.method, read_dataset(snakemake.input.data), cfg, seed=job.seed, dataset=wc.dataset)  # noqa: F821
job.write_metrics(snakemake.output.metrics, {**result, "seed_index": int(wc.seed)})  # noqa: F821
