"""driftbench_judge: the rubric judge on each run's final state (released score format, JSONL)."""

from pathlib import Path

from repro.jobs import Job
from repro.papers.driftbench.briefs import load_briefs
from repro.papers.driftbench.experiment import judge_runs, read_jsonl, write_jsonl

job = Job.from_snakemake(snakemake)
briefs = {b.id: b for b in load_briefs(ids=job.cfg["briefs"])}
scores = judge_runs(read_jsonl(snakemake.input.transcripts), briefs, job.cfg["judge"], root=Path("resources/llm"),
                    device=snakemake.params.device)
write_jsonl(snakemake.output.scores, scores)
