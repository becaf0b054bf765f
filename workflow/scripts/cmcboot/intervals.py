"""cmcboot: intervals of one method on one chunk of Monte Carlo replicates of one setting."""
from repro.jobs import Job
from repro.papers.cmcboot.experiment import run_chunk

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
chunk = int(wc.chunk)
# the data depend on the setting and the chunk only: every method sees the same replicates
result = run_chunk(job.cfg, wc.setting, wc.method, chunk,
                   data_seed=job.seed_for("cmcboot_data", setting=wc.setting, chunk=chunk), seed=job.seed)
job.write_metrics(snakemake.output.chunk, result)
