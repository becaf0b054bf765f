"""Every method on the same reset seeds of one control task and seed."""
from repro.jobs import Job
from repro.papers.gtp.control import evaluate_task
from repro.papers.gtp.experiment import load_models
from repro.rl.td3bc import load_policy

job = Job.from_snakemake(snakemake)
task, seed = job.wildcards["task"], int(job.wildcards["seed"])
wm, prior = load_models(snakemake.input.models)
policy = load_policy(snakemake.input.policy) if "policy" in snakemake.input.keys() else None
behaviour = load_policy(snakemake.input.behaviour) if "behaviour" in snakemake.input.keys() else None
# reset seeds and method randomness derive from the unit (task, seed), never from the method: paired comparison
out = evaluate_task(wm, prior, task, job.cfg, job.seed_for("gtp_control_starts", task=task, seed=seed),
                    job.seed_for("gtp_control_plan", task=task, seed=seed), policy=policy,
                    behaviour=behaviour)
job.write_metrics(snakemake.output.run, out)
