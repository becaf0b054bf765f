"""toolgap_evaluate: one model on both tasks: necessity (r tool-free samples), behaviour (greedy, tool
in the prompt), hidden states of the tool prompt's last tokens at every layer, and the cognition
(necessity) and action (call) probes on them with the trajectory split of the mismatched items."""

from pathlib import Path

import numpy as np

import repro.llm
from repro.io import atomic_path, read_json
from repro.jobs import Job
from repro.papers.toolgap.experiment import evaluate, probe_analysis, prompt_style

job = Job.from_snakemake(snakemake)
spec = job.cfg["model"]
data = read_json(snakemake.input.data)["items"]
source = Path(snakemake.input.model).parent if spec["kind"] == "tiny" else spec["model"]
root = Path(snakemake.input.model).parent.parent
lm = repro.llm.load(str(source), root=root, device=snakemake.params.device)
for k, task in enumerate(snakemake.params.tasks):
    # the same sampling seed for every model: paired items see paired streams
    records, hidden, diag = evaluate(lm, data[task], task, prompt_style(spec), job.cfg,
                                     seed=job.seed_for("toolgap-sample", task=task), hidden_layers=range(lm.n_layers + 1))
    # the same split seed for every model and task
    probes = probe_analysis(hidden, records, job.cfg["probe"], seed=job.seed_for("toolgap-probe"))
    with atomic_path(snakemake.output.hidden[k]) as tmp:
        with open(tmp, "wb") as fh:
            # float16 halves the file; a residual stream beyond its range stays float32
            np.savez(fh, hidden=hidden.astype(np.float16) if np.abs(hidden).max() < 6e4 else hidden)
    job.write_metrics(snakemake.output.probes[k], {"model": spec["name"], "task": task, **probes})
    job.write_metrics(snakemake.output.runs[k], {"model": spec["name"], "task": task,
                                                 "n_layers": lm.n_layers, "generation": diag, "records": records})
