"""The offline dataset of one MuJoCo task and seed: the replay buffer of an online TD3 agent (saved once, with its
sha256 beside it), and that agent (the task's `expert` reference) with its learning curve."""
from repro.config import from_dict
from repro.jobs import Job
from repro.papers.gtp.control import BehaviourConfig, behaviour_data
from repro.papers.gtp.data import save_dataset
from repro.rl.td3bc import save_policy

job = Job.from_snakemake(snakemake)
task, seed = job.wildcards["task"], int(job.wildcards["seed"])
cfg = from_dict(BehaviourConfig, job.cfg["dataset"], "gtp.mujoco.dataset")
data, agent, history = behaviour_data(task, cfg, job.seed_for("gtp_control_data", task=task, seed=seed))
save_policy(agent, history, snakemake.output.behaviour)
save_dataset(data, snakemake.output.data)
