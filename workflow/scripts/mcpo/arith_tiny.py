"""Task (ii) at smoke: a tiny reference model trained on arithmetic lines with planted answer-form shares."""
from pathlib import Path

from repro.jobs import Job
from repro.llm.tiny import TinyConfig, TinyTrainConfig, save_tiny, train_tiny
from repro.papers.mcpo.arithmetic import ArithConfig, tiny_corpus

job = Job.from_snakemake(snakemake)
model, task = job.cfg["model"], ArithConfig(**{k: (tuple(v) if k == "forms" else v)
                                               for k, v in job.cfg["task"].items()})
corpus = tiny_corpus(task, model["form_shares"], model["tiny_docs"], job.seed_for("mcpo_arith_corpus"))
tiny = TinyTrainConfig(model=TinyConfig(**model.get("tiny_shape", {})), steps=model["tiny_steps"])
lm, _ = train_tiny(corpus, tiny, job.seed_for("mcpo_arith_tiny"), name="tiny-mcpo-arith")
save_tiny(lm, Path(snakemake.output.model).parent)
