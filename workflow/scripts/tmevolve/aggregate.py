"""results/tmevolve/metrics.json: every summary, best baselines, ablation drops, the Q x K grid, region ARI."""
from repro.jobs import Job
from repro.papers.tmevolve.experiment import aggregate_metrics, read_summaries

job = Job.from_snakemake(snakemake)
summaries = read_summaries(dict(zip(snakemake.params.runs, snakemake.input.summaries)))
job.write_metrics(snakemake.output.metrics, aggregate_metrics(summaries, job.cfg))
