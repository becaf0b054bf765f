"""evalmeta_finetune: LoRA on one corpus with one seed; the best held-out checkpoint is kept."""

from pathlib import Path

from repro.io import read_json
from repro.jobs import Job
from repro.papers.evalmeta.experiment import finetune, load_base

job = Job.from_snakemake(snakemake)
docs = read_json(snakemake.input.data)["corpora"][job.wildcards["corpus"]]
lm = load_base(job.cfg["base"], snakemake.input.base, device=snakemake.params.device)
# the seed derives from the seed index only: the three corpora share the split, initialisation and order
summary = finetune(lm, docs, job.cfg["lora"], Path(snakemake.output.adapter).parent,
                   seed=job.seed_for("evalmeta-finetune", seed=job.wildcards["seed"]))
job.write_metrics(snakemake.output.summary, summary)
