"""The grokcap DAG's grid and the part of the preset each rule receives (pure Python, parse time).

``workflow/rules/grokcap.smk`` imports this module while Snakemake parses the workflow, so it uses
the standard library only. Each ``*_config`` function cuts the ``grokcap.<scale>`` preset down to
the keys that rule reads: Snakemake reruns a job whose params changed, so a rule reruns when its
part changes, not when another rule's key does (the grid's sizes or the cluster's runtime request
rerun no training job; the figures and Table 1 read ``metrics.json`` only and get no preset).
"""

from __future__ import annotations

from typing import Any

__all__ = ["GRID_KEYS", "DATA_KEYS", "AGGREGATE_KEYS", "run_targets", "data_config", "train_config",
           "aggregate_config"]

#: Preset keys that lay out the grid or request cluster time: the DAG's, not a run's settings.
GRID_KEYS = ("widths", "capacity_widths", "seeds", "runtime_min")
#: Preset keys of one seed replicate's data (``repro.papers.grokcap.synth.seed_dataset``).
DATA_KEYS = ("p", "operation", "train_fraction", "labels")
#: Preset keys the aggregate reads: the grokking criterion, and the task it writes into metrics.
AGGREGATE_KEYS = ("p", "operation", "grok_delay_ratio")


def run_targets(cfg: dict, prefix: str = "results/grokcap/runs") -> list[str]:
    """Every run file of the grid: (modular, random) x widths x seeds, then capacity_widths x seeds."""
    seeds = range(cfg["seeds"])
    return ([f"{prefix}/{task}/w{w}_s{s}.json" for task in ("modular", "random") for w in cfg["widths"] for s in seeds]
            + [f"{prefix}/capacity/w{w}_s{s}.json" for w in cfg["capacity_widths"] for s in seeds])


def data_config(cfg: dict) -> dict[str, Any]:
    """What a data job reads: the task and its split, and the kind of random-label data."""
    return {k: cfg[k] for k in DATA_KEYS}


def train_config(cfg: dict) -> dict[str, Any]:
    """What a training job reads: every run setting (the keys of ``GrokConfig``), none of the grid's.

    The run records its whole ``GrokConfig``; ``repro.config.from_dict`` refuses any key left here
    that ``GrokConfig`` does not know, so a new preset key goes either to ``GrokConfig`` or to
    :data:`GRID_KEYS`.
    """
    return {k: v for k, v in cfg.items() if k not in GRID_KEYS}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    """What the aggregate reads besides the run files."""
    return {k: cfg[k] for k in AGGREGATE_KEYS}
