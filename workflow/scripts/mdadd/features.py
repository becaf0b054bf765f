"""Encode every image (EfficientNet-Lite0) and caption (all-MiniLM-L6-v2) once; frozen encoders."""
from repro.jobs import Job
from repro.methods.distill.features import encode_corpus, write_features
from repro.papers.mdadd.experiment import corpus_for_source

job = Job.from_snakemake(snakemake)
p = snakemake.params
corpus = corpus_for_source(p.source, corpus=snakemake.input.get("corpus"), json_path=snakemake.input.get("json"),
                           image_root=p.image_root, max_images=p.max_images)
feats = encode_corpus(corpus, image_size=job.cfg["image_size"], batch_size=job.cfg["batch_size"], device=p.device)
write_features(snakemake.output.features, feats, dataset=snakemake.wildcards.dataset,
               image_encoder="efficientnet-lite0 (ImageNet)", text_encoder="all-MiniLM-L6-v2",
               image_size=job.cfg["image_size"])
