"""rlqgrad_benchmark: wall time and peak memory of one update of one method at n qubits."""
from repro.config import from_dict
from repro.jobs import Job
from repro.methods.rlqgrad import RLQGradConfig
from repro.papers.rlqgrad.experiment import benchmark_update

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
bench = job.cfg
cfg = from_dict(RLQGradConfig, bench["model"], f"rlqgrad.{job.scale}.model", n_qubits=int(wc.n),
                n_layers=bench["n_layers"], batch_size=bench["batch_size"])
# every method times the same batch and initialisation at one n: the seed leaves the method out
seed = job.seed_for(job.rule, n=wc.n)
result = benchmark_update(wc.method, cfg, reps=bench["reps"], time_cap_s=bench["time_cap_s"], n_classes=10, seed=seed)
job.write_metrics(snakemake.output.metrics, {**result, "seed_used": seed})
