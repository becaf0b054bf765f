"""The learned value against the exact optimal value (BFS) and the reward model on the data, for one seed."""
from repro.jobs import Job
from repro.papers.gtp.data import load_dataset
from repro.papers.gtp.diagnostics import value_diagnostic
from repro.papers.gtp.experiment import load_models
from repro.papers.gtp.maze import Maze

job = Job.from_snakemake(snakemake)
wm, _ = load_models(snakemake.input.models)
maze = Maze.named(job.cfg["maze"], step=job.cfg["step"])
job.write_metrics(snakemake.output.diag, value_diagnostic(wm, maze, load_dataset(snakemake.input.data)))
