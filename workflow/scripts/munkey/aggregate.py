"""Aggregate the units into results/munkey/metrics.json and the tidy tables."""
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.munkey.experiment import aggregate

job = Job.from_snakemake(snakemake)
runs = {}
for path in snakemake.input.runs:
    run = read_json(path)
    runs[(run["regime"], run["forget_set"], int(path.rsplit("seed", 1)[1].split(".")[0]))] = run
sweeps = {(p.split("/")[-2], int(p.rsplit("seed", 1)[1].split(".")[0])): read_json(p)["rows"]
          for p in snakemake.input.sweeps}
metrics, tidy, sweep = aggregate(runs, sweeps, job.cfg)
save_csv(tidy, snakemake.output.tidy)
save_csv(sweep, snakemake.output.sweep)
job.write_metrics(snakemake.output.metrics, metrics)
