"""collapse_recursion: one replicate of recursive EM at one fresh-data fraction, with its diagnostics."""

from repro.jobs import Job
from repro.papers.collapse.experiment import run_recursion

job = Job.from_snakemake(snakemake)
replicate = int(job.wildcards["rep"])
result = run_recursion(job.cfg, inject=float(job.wildcards["inject"]), replicate=replicate,
                       seed=job.seed_for("collapse_replicate", rep=replicate),  # the same at every fraction
                       diagnosed=snakemake.params.diagnosed, where=f"collapse.{job.scale}")
job.write_metrics(snakemake.output.run, result)
