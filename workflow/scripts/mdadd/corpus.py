"""Render the synthetic scene-caption corpus (images + captions sharing one latent scene)."""
from repro.data.captions import save_corpus
from repro.jobs import Job
from repro.papers.mdadd.synth import SceneConfig, make_corpus

job = Job.from_snakemake(snakemake)
c = job.cfg
corpus = make_corpus(c["n_train"], c["n_test"], seed=job.seed,
                     cfg=SceneConfig(image_size=c["image_size"], max_objects=c["max_objects"],
                                     captions_per_image=c["captions_per_image"]))
save_corpus(snakemake.output.corpus, corpus)
