"""grokcap_train: one model (task x width x seed) trained to its 99% thresholds or the step cap."""

from repro.io import load_npz
from repro.jobs import Job
from repro.papers.grokcap.experiment import run_grokcap

job = Job.from_snakemake(snakemake)
data = load_npz(snakemake.input.data)  # a damaged archive: a ValueError naming it
result = run_grokcap(job.cfg, task=job.wildcards["task"], width=int(job.wildcards["width"]),
                     replicate=int(job.wildcards["seed"]), data=data, seed=job.seed,
                     device=snakemake.params.device, where=f"grokcap.{job.scale}")
job.write_metrics(snakemake.output.run, result)
