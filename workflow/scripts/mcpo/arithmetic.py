"""Task (ii): every alpha and the reverse-KL baseline (a LoRA adapter each), the oracle pi* and the floor pi_ref."""
from pathlib import Path

import repro.llm
from repro.jobs import Job
from repro.llm.tiny import load_tiny
from repro.papers.mcpo.arithmetic import run_arith_seed
from repro.papers.mcpo.experiment import alpha_key

job = Job.from_snakemake(snakemake)  # noqa: F821
seed = int(job.wildcards["seed"])
folder = Path(snakemake.input.model).parent  # noqa: F821
model = job.cfg["model"]


def load_model():
    if model["kind"] == "tiny":
        return load_tiny(folder, name="tiny-mcpo-arith")
    return repro.llm.load(model["name"], root=folder.parent)


# one prompt set and one sampling stream per unit, shared by every alpha and baseline: paired
data_seed, train_seed = job.seed_for("mcpo_arith_data", seed=seed), job.seed_for("mcpo_arith_train", seed=seed)
job.write_metrics(snakemake.output.run, run_arith_seed(load_model, job.cfg, data_seed, train_seed, alpha_key))  # noqa: F821
