"""The offline maze dataset of one seed (saved once, with its sha256 beside it)."""
from repro.jobs import Job
from repro.papers.gtp.data import DatasetConfig, collect, save_dataset
from repro.papers.gtp.maze import Maze

job = Job.from_snakemake(snakemake)
seed = int(job.wildcards["seed"])
maze = Maze.named(job.cfg["maze"], step=job.cfg["step"])
data = collect(maze, DatasetConfig(**job.cfg["dataset"]), job.seed_for("gtp_data", seed=seed))
save_dataset(data, snakemake.output.data)
