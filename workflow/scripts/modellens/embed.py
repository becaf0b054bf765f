"""Embed every text (model cards, dataset descriptions) of every seed's leaderboard, or of the real dump, once."""
import numpy as np

from repro.data.sidecar import verify_inputs
from repro.io import atomic_path
from repro.jobs import Job
from repro.papers.modellens.experiment import embed_leaderboards, encode
from repro.papers.modellens.grid import seeds
from repro.papers.modellens.real import read_real, real_texts

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched input is checked against its sidecar first
if snakemake.params.source == "remote":
    texts = np.array(sorted(set(real_texts(read_real(snakemake.input.dump[0])))))
    emb = encode(texts.tolist(), job.cfg["text_encoder"])
else:
    data_seeds = [job.seed_for("modellens_data", seed=s) for s in seeds(job.cfg)]
    texts, emb = embed_leaderboards(job.cfg["leaderboard"], data_seeds, job.cfg["text_encoder"])
with atomic_path(snakemake.output.emb) as tmp:
    with open(tmp, "wb") as fh:
        np.savez(fh, texts=texts, emb=emb)
