"""Dequantise a shipped GGUF model into resources/llm/{model}/ (safetensors, config, tokenizer)."""
from pathlib import Path

from repro.jobs import Job
from repro.llm import cache_model

job = Job.from_snakemake(snakemake)
smk = snakemake
cache_model(smk.wildcards.model, Path(smk.output.model).parent.parent)
