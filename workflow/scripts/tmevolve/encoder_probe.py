"""Does the tissue signal survive the encoder? A linear probe of tissue class on every cross-validation unit of one
cohort, and the composition and arrangement oracles on the classes it reads."""


from repro.jobs import Job
from repro.methods.mil_train import load_prepared
from repro.papers.tmevolve.experiment import encoder_probe
from repro.tableio import read_csv

job = Job.from_snakemake(snakemake)
cohort = snakemake.wildcards.cohort
data = load_prepared(snakemake.input.dataset)
folds = read_csv(snakemake.input.folds, dtype={"slide_id": str})
units = [(r, f) for r in range(job.cfg["n_repeats"]) for f in range(job.cfg["n_folds"])]
seeds = {(r, f): job.seed_for("tmevolve_encoder_probe", cohort=cohort, repeat=r, fold=f) for r, f in units}
job.write_metrics(snakemake.output.probe, encoder_probe(data, folds, seeds, list(job.cfg["tasks"])))
