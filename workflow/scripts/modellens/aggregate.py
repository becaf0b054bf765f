"""Aggregate the seeds into results/modellens/metrics.json and the tidy tables."""
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.modellens.experiment import aggregate

job = Job.from_snakemake(snakemake)
runs = {int(p.rsplit("seed", 1)[1].split(".")[0]): read_json(p) for p in snakemake.input.runs}
metrics, tidy, regret, routing = aggregate(runs, job.cfg)
save_csv(tidy, snakemake.output.tidy)
save_csv(regret, snakemake.output.regret)
save_csv(routing, snakemake.output.routing)
job.write_metrics(snakemake.output.metrics, metrics)
