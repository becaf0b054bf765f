"""Online fine-tuning of one method on one classic-control task and seed (repro.papers.gtp.online)."""
import numpy as np

from repro.config import from_dict
from repro.jobs import Job
from repro.papers.gtp.data import load_dataset
from repro.papers.gtp.experiment import PlanConfig, load_models
from repro.papers.gtp.online import OnlineConfig, OnlineState, run_online
from repro.rl.td3bc import load_critic, load_policy

job = Job.from_snakemake(snakemake)
task, method, seed = job.wildcards["task"], job.wildcards["method"], int(job.wildcards["seed"])
cfg = from_dict(OnlineConfig, job.cfg["online"], "gtp.control.online")
state = OnlineState(load_dataset(snakemake.input.data))  # checks the sha256
if "models" in snakemake.input.keys():
    state.wm, state.prior = load_models(snakemake.input.models)
if "policy" in snakemake.input.keys():
    state.policy, state.critic = load_policy(snakemake.input.policy), load_critic(snakemake.input.policy)
# evaluation: the offline evaluation's reset seeds and planning seed (round 0 is that evaluation); collection and
# updates: streams of the unit (task, seed), shared by its methods
rng = np.random.default_rng(job.seed_for("gtp_control_starts", task=task, seed=seed))
out, _ = run_online(method, task, state, cfg, length=job.cfg["length"], plan=from_dict(PlanConfig, job.cfg["plan"], "gtp.control.plan"),
                 eval_seeds=[int(s) for s in rng.integers(2**31, size=job.cfg["episodes"])],
                 plan_seed=job.seed_for("gtp_control_plan", task=task, seed=seed),
                 collect_seed=job.seed_for("gtp_online_collect", task=task, seed=seed),
                 fit_seed=job.seed_for("gtp_online_fit", task=task, seed=seed), td3bc_cfg=job.cfg["td3bc"])
job.write_metrics(snakemake.output.run, {**out, "seed": seed})
