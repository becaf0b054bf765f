"""cmcboot: intervals of one method on one chunk of Monte Carlo replicates of one setting."""
from repro.experiments.cmcboot import run_chunk
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
result = run_chunk(job.cfg, wc.setting, wc.method, int(wc.chunk), global_seed=snakemake.config["seed"], seed=job.seed)
job.write_metrics(snakemake.output.chunk, result)
