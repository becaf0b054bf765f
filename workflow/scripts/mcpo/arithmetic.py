"""Task (ii): every alpha and the reverse-KL baseline (a LoRA adapter each), the oracle pi* and the floor pi_ref."""
from pathlib import Path

from repro.jobs import Job
from repro.papers.mcpo.arithmetic import model_loader, run_arith_seed
from repro.papers.mcpo.experiment import alpha_key

job = Job.from_snakemake(snakemake)
seed = int(job.wildcards["seed"])
load_model = model_loader(job.cfg["model"], Path(snakemake.input.model).parent, "tiny-mcpo-arith")
# one prompt set and one sampling stream per unit, shared by every alpha and baseline: paired
data_seed, train_seed = job.seed_for("mcpo_arith_data", seed=seed), job.seed_for("mcpo_arith_train", seed=seed)
job.write_metrics(snakemake.output.run, run_arith_seed(load_model, job.cfg, data_seed, train_seed, alpha_key))
