"""Task (iii) at smoke: a tiny base model trained on question-answer lines with planted refusal rates per prefix."""
from pathlib import Path

from repro.jobs import Job
from repro.llm.tiny import ByteTokenizer, TinyConfig, TinyTrainConfig, save_tiny, train_tiny
from repro.papers.mcpo.safety import tiny_corpus

job = Job.from_snakemake(snakemake)
model = job.cfg["model"]
corpus = tiny_corpus(model["refusal_rates"], model["tiny_docs"], job.seed_for("mcpo_safety_corpus"),
                     ByteTokenizer().render_chat)
tiny = TinyTrainConfig(model=TinyConfig(**model.get("tiny_shape", {})), steps=model["tiny_steps"])
lm, _ = train_tiny(corpus, tiny, job.seed_for("mcpo_safety_tiny"), name="tiny-mcpo-safety")
save_tiny(lm, Path(snakemake.output.model).parent)
