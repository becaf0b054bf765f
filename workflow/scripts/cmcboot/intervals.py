"""cmcboot: intervals of one method on one chunk of Monte Carlo replicates of one setting."""
from repro.jobs import Job
from repro.papers.cmcboot.experiment import chunk_seeds, run_chunk

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
chunk = int(wc.chunk)
# data and bootstrap seeds depend on the setting and the chunk only: every method sees the same replicates
result = run_chunk(job.cfg, wc.setting, wc.method, chunk, **chunk_seeds(job.seed_for, wc.setting, chunk))
job.write_metrics(snakemake.output.chunk, result)
