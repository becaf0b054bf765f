"""Run one method on one replicate chunk of one simulated setting."""
from repro.experiments.groupfdr import run_chunk
from repro.jobs import Job

job = Job.from_snakemake(snakemake)  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
out = run_chunk(job.cfg, wc.setting, wc.method, int(wc.chunk), global_seed=snakemake.config["seed"], seed=job.seed)  # noqa: F821
job.write_metrics(snakemake.output.run, out)  # noqa: F821
