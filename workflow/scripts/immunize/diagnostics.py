"""Per seed, model and defence: the defence objective's per-term gradient norms and the benign features' drift."""
import pandas as pd

from repro.tables import save_csv, save_table
from repro.io import load_npz
from repro.jobs import Job
from repro.papers.immunize.diagnostics import diagnose_unit, summarise
from repro.papers.immunize.synth import make_tasks

job = Job.from_snakemake(snakemake)
cfg = job.cfg
rows = []
for path, seed in zip(snakemake.input.thetas, snakemake.params.seeds, strict=True):
    # the unit's seeds (workflow/scripts/immunize/unit.py): the same split and plateau samples as its defences
    tasks = make_tasks(job.seed_for("immunize_data", seed=seed), **cfg.get("data", {}))
    thetas = load_npz(path)
    rows += diagnose_unit(cfg, tasks, thetas, seed, job.seed_for("immunize_train", seed=seed))
table = pd.DataFrame(rows).sort_values(["model", "method", "seed"], kind="stable").reset_index(drop=True)
save_csv(table, snakemake.output.table)
save_table(summarise(table), snakemake.output.summary,
           title="immunize diagnostics: mean over seeds [95% bootstrap interval] per model, defence and column")
