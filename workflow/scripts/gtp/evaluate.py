"""Every method (and the budget sweep) on the same starts of one seed."""
from repro.jobs import Job
from repro.papers.gtp.experiment import evaluate_seed, load_goal_policy, load_models
from repro.rl.td3bc import load_policy

job = Job.from_snakemake(snakemake)
seed = int(job.wildcards["seed"])
wm, prior = load_models(snakemake.input.models)
policy = load_policy(snakemake.input.policy) if "policy" in snakemake.input.keys() else None
goal_policy = load_goal_policy(snakemake.input.goal_policy) if "goal_policy" in snakemake.input.keys() else None
# starts and method randomness derive from the unit (seed), never from the method: paired comparison
out = evaluate_seed(wm, prior, job.cfg, job.seed_for("gtp_starts", seed=seed), job.seed_for("gtp_control", seed=seed),
                    policy=policy, goal_policy=goal_policy)
job.write_metrics(snakemake.output.run, out)
