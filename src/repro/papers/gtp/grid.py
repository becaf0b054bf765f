"""The gtp DAG's grid (one dataset, one set of learned models and one evaluation per seed) and each rule's part of the preset.

Imported by ``workflow/rules/gtp.smk`` at parse time: standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["seeds", "eval_targets", "data_config", "train_config", "eval_config", "aggregate_config"]


def seeds(cfg: dict) -> list[int]:
    """The units: seed indices 0..seeds-1 (each its own dataset and models, shared by every method)."""
    return list(range(cfg["seeds"]))


def eval_targets(cfg: dict, prefix: str = "results/gtp/eval") -> list[str]:
    return [f"{prefix}/seed{s}.json" for s in seeds(cfg)]


def data_config(cfg: dict) -> dict[str, Any]:
    return {"maze": cfg["maze"], "step": cfg["step"], "dataset": cfg["dataset"]}


def train_config(cfg: dict) -> dict[str, Any]:
    return {"model": cfg["model"], "diffusion": cfg["diffusion"], "horizon": cfg["plan"]["horizon"]}


def eval_config(cfg: dict) -> dict[str, Any]:
    keys = ("maze", "step", "buckets", "episodes_per_bucket", "limit_factor", "methods", "budgets", "plan")
    return {k: cfg[k] for k in keys}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    return {"main_n_samples": cfg["plan"]["n_samples"]}
