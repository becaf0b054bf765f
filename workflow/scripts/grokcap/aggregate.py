"""grokcap_aggregate: T_mem(P), T_gen(P), power laws, crossing, grokking threshold, capacity."""

from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.grokcap.experiment import curves_table, summarise

job = Job.from_snakemake(snakemake)
records = [read_json(path) for path in snakemake.input.runs]
metrics, runs = summarise(records, grok_delay_ratio=job.cfg["grok_delay_ratio"])
save_csv(runs, snakemake.output.runs)
save_csv(curves_table(records), snakemake.output.curves)
job.write_metrics(snakemake.output.metrics, {"p": job.cfg["p"], "operation": job.cfg["operation"], **metrics})
