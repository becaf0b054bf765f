"""evalmeta_table2: the knowledge probe (a diagnostic): absorption NLL and statement margins per model,
each tuned model minus the control-tuned one paired per seed."""

from repro.tables import save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.evalmeta.probe import summarise_probe, table2

job = Job.from_snakemake(snakemake)
runs = {}
for path in snakemake.input.runs:
    run = read_json(path)
    runs[(run["model"], run["seed"])] = run
metrics, rows = summarise_probe(runs, read_json(snakemake.input.probe_data)["pairs"])
save_table(table2(rows), snakemake.output.csv,
           title="evalmeta (diagnostic): knowledge probe of the adapters; NLL of fresh documents (nats/token), "
                 "statement margin log p(true) - log p(false) (nats) and accuracy; minus_control paired per seed, "
                 "95% t interval over seeds")
job.write_metrics(snakemake.output.metrics, metrics)
