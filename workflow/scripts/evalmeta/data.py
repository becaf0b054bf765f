"""evalmeta_data: benchmark items (templated, or a local JSONL file), the three corpora, the tiny base's transcripts."""

from repro.io import write_json
from repro.jobs import Job
from repro.papers.evalmeta.experiment import build_data
from repro.papers.evalmeta.suites import load_items

job = Job.from_snakemake(snakemake)
items = load_items(snakemake.params.items_jsonl) if snakemake.params.source == "local" else None
write_json(snakemake.output.data, build_data(job.cfg, seed=job.seed_for("evalmeta-data"), items=items))
