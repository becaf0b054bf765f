"""Null sign symmetry, FDR and power of the mirrors on one design of the symmetry grid."""
from repro.jobs import Job
from repro.papers.groupfdr.symmetry import run_design, summarise

job = Job.from_snakemake(snakemake)
design = job.wildcards["design"]
cfg = job.cfg
spec = cfg["designs"][design]
# one data set and one perturbation stream per (design, replicate), shared by both mirrors
data_seeds = [job.seed_for("groupfdr_symmetry_data", design=design, replicate=r) for r in range(cfg["replicates"])]
method_seeds = [job.seed_for("groupfdr_symmetry_method", design=design, replicate=r) for r in range(cfg["replicates"])]
records = run_design(spec, data_seeds=data_seeds, method_seeds=method_seeds, qs=cfg["qs"], methods=cfg["methods"],
                     method_options=cfg.get("method_options"))
job.write_metrics(snakemake.output.run, {"design": design, "records": records,
                                         "summary": summarise(design, spec, records)})
