"""Aggregate the seeds (maze and classic-control tasks) into results/gtp/metrics.json and the tidy per-seed tables."""
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.gtp.control import aggregate_control
from repro.papers.gtp.experiment import aggregate
from repro.papers.gtp.online import aggregate_online, online_tidy

job = Job.from_snakemake(snakemake)
runs = {int(p.rsplit("seed", 1)[1].split(".")[0]): read_json(p) for p in snakemake.input.runs}
metrics, tidy = aggregate(runs, job.cfg)
control_runs = {}
for p in snakemake.input.control:  # results/gtp/control/<task>/eval/seed<s>.json
    r = read_json(p)
    control_runs[(r["task"], int(p.rsplit("seed", 1)[1].split(".")[0]))] = r
metrics["control"], control_tidy = aggregate_control(control_runs) if control_runs else ({}, None)
online = online_tidy([read_json(p) for p in snakemake.input.online], control_tidy) if control_runs else None
metrics["online"] = aggregate_online(online) if online is not None else {}
save_csv(tidy, snakemake.output.tidy)
save_csv(online if online is not None else tidy.iloc[:0], snakemake.output.online_tidy)
save_csv(control_tidy if control_tidy is not None else tidy.iloc[:0], snakemake.output.control_tidy)
job.write_metrics(snakemake.output.metrics, metrics)
