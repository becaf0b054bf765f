"""The model-free baseline (TD3+BC) of one seed (maze) or one task and seed, on the same offline dataset, with its training diagnostics."""
import logging

from repro.jobs import Job
from repro.papers.gtp.data import load_dataset
from repro.papers.gtp.experiment import train_td3bc
from repro.rl.td3bc import save_policy

job = Job.from_snakemake(snakemake)
seed = int(job.wildcards["seed"])
unit = {"task": job.wildcards["task"], "seed": seed} if "task" in job.wildcards else {"seed": seed}  # maze: seed only
data = load_dataset(snakemake.input.data)  # checks the sha256
policy, critic, history = train_td3bc(data, job.cfg["td3bc"], job.seed_for("gtp_td3bc", **unit))
for row in history:
    logging.getLogger("gtp.td3bc").info(", ".join(f"{k} {v:.4g}" for k, v in row.items()))
save_policy(policy, history, snakemake.output.policy, critic=critic)  # the critic: online fine-tuning
job.write_metrics(snakemake.output.diag, {"task": unit.get("task", "maze"), "seed": seed, "history": history})
