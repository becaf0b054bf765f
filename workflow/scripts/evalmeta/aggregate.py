"""evalmeta_aggregate: safe-behaviour rates, shifts (all and unaware pairs), over-refusal, judge agreement."""

import pandas as pd

from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.evalmeta.experiment import judge_report, summarise

job = Job.from_snakemake(snakemake)
runs = {}
for path in snakemake.input.responses:
    run = read_json(path)
    runs[(run["model"], run["seed"])] = run["records"]
training = {}
for path in snakemake.input.training:
    corpus, seed = path.split("/")[-3], int(path.split("/")[-2].removeprefix("seed"))
    training[(corpus, seed)] = read_json(path)
metrics, table, shifts = summarise(runs, judge_report("rules"), training)
save_csv(pd.DataFrame(table), snakemake.output.table)
save_csv(pd.DataFrame(shifts), snakemake.output.shifts)
job.write_metrics(snakemake.output.metrics, metrics)
