"""toolgap_data: evaluation items of both tasks and the tiny models' corpus (or TruthfulQA, source: local)."""

from repro.io import write_json
from repro.jobs import Job
from repro.papers.toolgap.experiment import build_data, truthfulqa_items

job = Job.from_snakemake(snakemake)
data = build_data(job.cfg, seed=job.seed_for("toolgap-data"))
if snakemake.params.source == "local":
    data["items"]["truthfulqa"] = truthfulqa_items(job.cfg["truthfulqa"])
    del data["items"]["knowledge"]
write_json(snakemake.output.data, data)
