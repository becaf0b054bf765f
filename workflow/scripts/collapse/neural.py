"""collapse_neural: one model's recursion on its own samples at one fresh-data fraction and seed."""

from repro.data.image_folder import read_npz
from repro.data.sidecar import verify_inputs
from repro.jobs import Job
from repro.papers.collapse.neural import NeuralConfig, prepare_pool, run_neural
from repro.config import from_dict

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # the images, against the sha256 collapse_neural_data wrote beside them
job.limit_threads()
index = int(job.wildcards["seed"])
cfg = from_dict(NeuralConfig, job.cfg, f"collapse.{job.scale}.neural")
images = read_npz(snakemake.input.data)
pool_x, pool_y = prepare_pool(images.x, images.y, images.classes, cfg)
result = run_neural(cfg, job.wildcards["model"], inject=float(job.wildcards["inject"]),
                    seed=job.seed_for("collapse_neural_seed", seed=index),  # the same for every model and fraction
                    pool_x=pool_x, pool_y=pool_y, where=f"collapse.{job.scale}.neural")
result["seed_index"] = index
job.write_metrics(snakemake.output.run, result)
