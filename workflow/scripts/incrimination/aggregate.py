"""incrimination_aggregate: verdict accuracy per method, faithfulness and samples; fingerprints; agents' verdicts."""

import pandas as pd

from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.incrimination.experiment import summarise

job = Job.from_snakemake(snakemake)
testbed = [read_json(p) for p in snakemake.input.testbed]
agents = {run["agent"]: run["runs"] for run in map(read_json, snakemake.input.agents)}
metrics, accuracy, effects, verdicts = summarise(testbed, agents, job.cfg)
save_csv(pd.DataFrame(accuracy), snakemake.output.accuracy)
save_csv(pd.DataFrame(effects), snakemake.output.effects)
save_csv(pd.DataFrame(verdicts), snakemake.output.verdicts)
job.write_metrics(snakemake.output.metrics, metrics)
