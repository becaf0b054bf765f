"""cmcboot data step: the RiverSwim chain of the preset and its true targets (P, V^pi, V*, Q*)."""
from repro.jobs import Job
from repro.papers.cmcboot.experiment import ground_truth

job = Job.from_snakemake(snakemake)
job.write_metrics(snakemake.output.truth, ground_truth(job.cfg))
