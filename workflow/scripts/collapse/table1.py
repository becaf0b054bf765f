"""collapse_table1: survival per injection fraction; LLC vs stratum RLCT; slopes per extinction and curvature; the neural runs' changes per model and arm."""

from repro.tables import save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.collapse.figures import table1

Job.from_snakemake(snakemake)
metrics = read_json(snakemake.input.metrics)
save_table(table1(metrics), snakemake.output.csv,
           title="collapse: recursive EM on a labelled Gaussian mixture; neural recursion (VAE, VaDE, DDPM)", float_format="{:.4g}")
