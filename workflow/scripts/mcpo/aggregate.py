"""Aggregate the seeds into results/mcpo/metrics.json, the tidy per-(seed, method) table and the claims' intervals
the figures draw."""
from repro.claims import load_claims
from repro.claimtables import claim_table
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.mcpo.experiment import aggregate

job = Job.from_snakemake(snakemake)


def by_seed(paths):
    return {int(p.rsplit("seed", 1)[1].split(".")[0]): read_json(p) for p in paths}


metrics, tidy = aggregate(by_seed(snakemake.input.runs), job.cfg, by_seed(snakemake.input.arith),
                          by_seed(snakemake.input.safety))
save_csv(tidy, snakemake.output.tidy)
save_csv(claim_table(load_claims(snakemake.input.claims, snakemake.input.schema), metrics), snakemake.output.claims,
         float_format=None)
job.write_metrics(snakemake.output.metrics, metrics)
