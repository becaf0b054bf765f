"""driftbench_run: one model under one condition, every brief and repetition (transcripts, JSONL)."""

from pathlib import Path

from repro.config import from_dict
from repro.jobs import Job
from repro.papers.driftbench.briefs import load_briefs
from repro.papers.driftbench.experiment import build_model, write_jsonl
from repro.papers.driftbench.harness import Generation, run_condition

job = Job.from_snakemake(snakemake)
spec = job.cfg["model"]
briefs = load_briefs(ids=job.cfg["briefs"])
lm = build_model(spec, briefs, root=Path("resources/llm"), device=snakemake.params.device)
gen = from_dict(Generation, {**job.cfg["generation"], "temperature": spec["temperature"]}, "driftbench.generation")
# one seed for every model and condition: runs are paired per (brief, repetition)
runs = run_condition(lm, briefs, job.wildcards["condition"], repetitions=job.cfg["repetitions"],
                     seed=job.seed_for("driftbench-run"), gen=gen, model_id=spec["name"])
write_jsonl(snakemake.output.transcripts, runs)
