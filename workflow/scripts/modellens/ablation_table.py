"""The ablation table: each variant beside the full ModelLens of the same seeds, paired differences with intervals."""
from repro.tables import save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.modellens.experiment import ablation_table


def by_seed(paths):
    return {int(p.rsplit("seed", 1)[1].split(".")[0]): read_json(p) for p in paths}


job = Job.from_snakemake(snakemake)
table = ablation_table(by_seed(snakemake.input.runs), by_seed(snakemake.input.ablations), job.cfg["main_k"])
save_table(table, snakemake.output.csv,
           title="modellens ablations: mean over seeds, paired difference to the full model with 95% bootstrap interval")
