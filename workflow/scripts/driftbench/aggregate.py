"""driftbench_aggregate: checker, probe recall, KBV, complexity and judge misses per run; metrics.json."""

import pandas as pd

from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.driftbench.briefs import load_briefs
from repro.papers.driftbench.experiment import aggregate, briefs_from_dicts, read_jsonl

job = Job.from_snakemake(snakemake)
if snakemake.params.source == "remote":
    release = read_json(snakemake.input.release)
    briefs, transcripts, scores = briefs_from_dicts(release["briefs"]), release["transcripts"], release["scores"]
    published = pd.DataFrame(release["published"]) if release["published"] else None
    under_test = sorted({t["metadata"]["model_id"] for t in transcripts})
    layout = release["layout"]
else:
    briefs = load_briefs(ids=snakemake.params.briefs)
    transcripts = [t for f in snakemake.input.transcripts for t in read_jsonl(f)]
    scores = [s for f in snakemake.input.scores for s in read_jsonl(f)]
    published, under_test, layout = None, snakemake.params.under_test, None
metrics, runs, recall, table = aggregate(transcripts, scores, briefs, under_test, published)
if layout is not None:
    metrics["release"] = layout  # which layout was read, what was left out
# what each model ran on (backend, quantisation, threads): released transcripts may not say
metrics["engines"] = {t["metadata"]["model_id"]: t["metadata"].get("engine") for t in transcripts}
save_csv(runs, snakemake.output.runs)
save_csv(recall, snakemake.output.recall)
save_csv(table, snakemake.output.table)
job.write_metrics(snakemake.output.metrics, metrics)
