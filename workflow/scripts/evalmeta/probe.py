"""evalmeta_probe: one model (base, or base + one corpus's adapter): NLL of the fresh documents of each
corpus and log-probability margins of the true over the false statement of each pair."""

from pathlib import Path

from repro.io import read_json
from repro.jobs import Job
from repro.papers.evalmeta.experiment import evaluated_model
from repro.papers.evalmeta.probe import run_probe

job = Job.from_snakemake(snakemake)
adapter = Path(snakemake.input.adapter) if "adapter" in snakemake.input.keys() else None  # best/ checkpoint folder
lm = evaluated_model(job.cfg, snakemake.input.base, adapter, device=snakemake.params.device)
probe = read_json(snakemake.input.probe_data)
result = run_probe(lm, probe["documents"], probe["pairs"], max_length=job.cfg["max_length"],
                   batch_size=job.cfg["probe"]["batch_size"])
job.write_metrics(snakemake.output.probe, {"model": job.wildcards["model"], "seed": int(job.wildcards["seed"]),
                                           **result})
