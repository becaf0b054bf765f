"""The runs of a TMEvolve preset: the DAG's fan-out, read by ``workflow/rules/tmevolve.smk`` at parse time.

Pure Python (no numpy, no torch), so every Snakemake call stays fast.
"""

from __future__ import annotations

from repro.methods.tmevolve_variants import grid_name

__all__ = ["experiment_runs"]


def experiment_runs(cfg: dict) -> list[str]:
    """Every ``task/method`` the preset asks for: all methods on every task, the ablations on the
    ablation tasks, and the Q x K grid on the grid task (the DAG's fan-out)."""
    runs = [f"{t}/{m}" for t in cfg["tasks"] for m in cfg["methods"]]
    runs += [f"{t}/{m}" for t in cfg["ablation_tasks"] for m in cfg["ablations"]]
    grid = cfg["grid"]
    runs += [f"{grid['task']}/{grid_name(q, k)}" for q in grid["Q"] for k in grid["K"]]
    return list(dict.fromkeys(runs))
