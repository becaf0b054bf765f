"""World model (dynamics ensemble, reward, TD value) and the diffusion prior of one seed (maze) or one task and seed."""
from repro.jobs import Job
from repro.papers.gtp.data import load_dataset
from repro.papers.gtp.experiment import save_models, train_models

job = Job.from_snakemake(snakemake)
seed = int(job.wildcards["seed"])
unit = {"task": job.wildcards["task"], "seed": seed} if "task" in job.wildcards else {"seed": seed}  # maze: seed only
data = load_dataset(snakemake.input.data)  # checks the sha256
wm, prior = train_models(data, job.cfg["model"], job.cfg["diffusion"], job.cfg["horizon"], job.seed_for("gtp_train", **unit))
save_models(wm, prior, job.cfg, snakemake.output.models)
