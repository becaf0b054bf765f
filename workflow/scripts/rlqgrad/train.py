"""rlqgrad_train: train the hybrid QNN with one method for a fixed number of updates."""
from repro.config import from_dict
from repro.jobs import Job
from repro.methods.rlqgrad import RLQGradConfig, read_dataset, train_qnn

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
# every method sees the same draws (paired comparison): the seed leaves the method out
seed = job.seed_for(job.rule, dataset=wc.dataset, n=wc.n, seed=wc.seed)
cfg = from_dict(RLQGradConfig, job.cfg["model"], f"rlqgrad.{job.scale}.model", n_qubits=int(wc.n),
                n_layers=job.cfg["n_layers"], steps=job.cfg["steps"])
result = train_qnn(wc.method, read_dataset(snakemake.input.data), cfg, seed=seed, dataset=wc.dataset)
job.write_metrics(snakemake.output.metrics, {**result, "seed_index": int(wc.seed), "seed_used": seed})
