"""Run one method on one replicate chunk of one simulated setting."""
from repro.io import read_json
from repro.jobs import Job
from repro.papers.groupfdr.experiment import run_chunk
from repro.papers.groupfdr.grid import replicates_of_chunk

job = Job.from_snakemake(snakemake)
setting, method, chunk = job.wildcards["setting"], job.wildcards["method"], int(job.wildcards["chunk"])
# one data set and one method stream per (setting, replicate), shared by every method: the comparison is paired
replicates = replicates_of_chunk(job.cfg, chunk)
data_seeds = [job.seed_for("groupfdr_data", setting=setting, replicate=r) for r in replicates]
method_seeds = [job.seed_for("groupfdr_method", setting=setting, replicate=r) for r in replicates]
# group_gm_plus, group_gm_stepdown, ...: the statistics of the selector they differ from only in the rule
sources = list(snakemake.input.statistics)
source = read_json(sources[0]) if sources else None
out = run_chunk(job.cfg, setting, method, chunk, data_seeds=data_seeds, method_seeds=method_seeds, source=source)
job.write_metrics(snakemake.output.run, out)
