"""Mean +- sd over folds of one method on one task."""
from repro.jobs import Job
from repro.papers.tmevolve.experiment import summarize_fold_files

job = Job.from_snakemake(snakemake)
job.write_metrics(snakemake.output.summary, summarize_fold_files(list(snakemake.input.folds)))
