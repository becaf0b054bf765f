"""rlqgrad_variance: Var over random initialisations of one method's (surrogate) gradient at n qubits."""
from repro.config import from_dict
from repro.jobs import Job
from repro.methods.rlqgrad import RLQGradConfig
from repro.papers.rlqgrad.experiment import gradient_variance

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
# every method sees the same draws (paired comparison): the seed leaves the method out
seed = job.seed_for(job.rule, n=wc.n, seed=wc.seed)
cfg = from_dict(RLQGradConfig, job.cfg["model"], f"rlqgrad.{job.scale}.model", n_qubits=int(wc.n),
                n_layers=job.cfg["n_layers"])
result = gradient_variance(wc.method, cfg, n_inits=job.cfg["n_inits"], seed=seed)
job.write_metrics(snakemake.output.metrics, {**result, "seed_index": int(wc.seed), "seed_used": seed})
