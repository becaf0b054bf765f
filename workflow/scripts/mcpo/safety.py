"""Task (iii): per reference (system message), every alpha (a LoRA adapter each), the oracle pi* and the floor pi_ref."""
from pathlib import Path

from repro.jobs import Job
from repro.papers.mcpo.arithmetic import model_loader
from repro.papers.mcpo.experiment import alpha_key
from repro.papers.mcpo.safety import run_safety_seed

job = Job.from_snakemake(snakemake)
seed = int(job.wildcards["seed"])
load_model = model_loader(job.cfg["model"], Path(snakemake.input.model).parent, "tiny-mcpo-safety")
# one pair set and one sampling stream per unit, shared by both references and every alpha: paired
data_seed, train_seed = job.seed_for("mcpo_safety_data", seed=seed), job.seed_for("mcpo_safety_train", seed=seed)
job.write_metrics(snakemake.output.run, run_safety_seed(load_model, job.cfg, data_seed, train_seed, alpha_key))
