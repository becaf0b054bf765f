"""evalmeta_evaluate: one model (base, or base + one corpus's adapter) on every item: sampled responses
scored by the judge, log-probability scores, awareness levels."""

from pathlib import Path

from repro.io import read_json
from repro.jobs import Job
from repro.papers.evalmeta.experiment import evaluate, evaluated_model, make_scorer

job = Job.from_snakemake(snakemake)
adapter = Path(snakemake.input.adapter) if "adapter" in snakemake.input.keys() else None  # best/ checkpoint folder
lm = evaluated_model(job.cfg, snakemake.input.base, adapter, device=snakemake.params.device)
scorer = make_scorer(job.cfg["judge"], snakemake.params.llm)
seed_index = int(job.wildcards["seed"])
# the same sampling stream for every model of a seed index: responses are paired by prompt and seed
records = evaluate(lm, read_json(snakemake.input.data)["items"], job.cfg, seed=job.seed_for("evalmeta-sample", seed=seed_index),
                   seed_index=seed_index, scorer=scorer)
job.write_metrics(snakemake.output.responses, {"model": job.wildcards["model"], "seed": seed_index,
                                               "records": records})
