"""results/tmevolve/metrics.json: every run summarised from its fold records, best baselines, ablation drops, the Q x K grid, region ARI.

Under ``--config partial=true`` it summarises the runs whose every unit is built and records the
others in ``partial.missing_runs`` (the checker reports claims that need them NOT RUN).
"""
from repro.jobs import Job
from repro.papers.tmevolve.experiment import aggregate_metrics, collect_summaries, complete_runs

job = Job.from_snakemake(snakemake)
train = dict(zip(snakemake.input.train, snakemake.params.train_cohorts))
oracles = dict(zip(snakemake.input.oracles, snakemake.params.oracle_cohorts))
if snakemake.params.partial:
    if not train:
        raise ValueError("tmevolve: partial=true but no training job is built yet; build some, or drop partial")
    summaries, missing = complete_runs(collect_summaries(train, oracles), snakemake.params.runs)
else:
    summaries, missing = collect_summaries(train, oracles, expected=snakemake.params.runs), []
metrics = aggregate_metrics(summaries, job.cfg)
if missing:
    metrics["partial"] = {"missing_runs": missing, "n_runs": len(snakemake.params.runs)}
job.write_metrics(snakemake.output.metrics, metrics)
