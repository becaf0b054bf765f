"""cmcboot data step: the RiverSwim chain of the preset and its true targets (P, V^pi, V*, Q*)."""
from repro.experiments.cmcboot import ground_truth
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
job.write_metrics(snakemake.output.truth, ground_truth(job.cfg))
