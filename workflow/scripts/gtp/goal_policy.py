"""The maze's goal-conditioned diffusion policy of one seed (goals relabelled in hindsight on its offline dataset)."""

from repro.jobs import Job
from repro.papers.gtp.data import load_dataset
from repro.papers.gtp.experiment import save_goal_policy, train_goal_policy

job = Job.from_snakemake(snakemake)
data = load_dataset(snakemake.input.data)  # checks the sha256
policy = train_goal_policy(
    data, job.cfg["diffusion"], job.cfg["horizon"], job.seed_for("gtp_goal_policy", seed=int(job.wildcards["seed"]))
)
save_goal_policy(policy, job.cfg, snakemake.output.policy)
