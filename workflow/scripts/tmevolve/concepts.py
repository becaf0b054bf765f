"""Embed the concept texts once with the offline all-MiniLM-L6-v2 (training jobs read the cache)."""
from repro.jobs import Job
from repro.methods.tmevolve import CONCEPT_TEXTS, embed_concepts
from repro.papers.tmevolve.experiment import save_concepts

job = Job.from_snakemake(snakemake)
names, emb = embed_concepts(CONCEPT_TEXTS)
save_concepts(snakemake.output.emb, names, [CONCEPT_TEXTS[n] for n in names], emb)
