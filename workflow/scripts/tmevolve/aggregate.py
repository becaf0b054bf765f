"""results/tmevolve/metrics.json: every run summarised from its fold records, best baselines, ablation drops, the Q x K grid, region ARI."""
from repro.jobs import Job
from repro.papers.tmevolve.experiment import aggregate_metrics, collect_summaries

job = Job.from_snakemake(snakemake)
summaries = collect_summaries(dict(zip(snakemake.input.train, snakemake.params.train_cohorts)),
                              dict(zip(snakemake.input.oracles, snakemake.params.oracle_cohorts)),
                              expected=snakemake.params.runs)
job.write_metrics(snakemake.output.metrics, aggregate_metrics(summaries, job.cfg))
