"""The gtp DAG's grid (one dataset, one set of learned models and one evaluation per seed) and each rule's part of the preset.

Imported by ``workflow/rules/gtp.smk`` at parse time: standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["seeds", "eval_targets", "diag_targets", "diag_config", "data_config", "train_config", "eval_config", "aggregate_config", "control_tasks",
           "control_eval_targets", "control_data_config", "control_train_config", "control_eval_config"]


def seeds(cfg: dict) -> list[int]:
    """The units: seed indices 0..seeds-1 (each its own dataset and models, shared by every method)."""
    return list(range(cfg["seeds"]))


def eval_targets(cfg: dict, prefix: str = "results/gtp/eval") -> list[str]:
    return [f"{prefix}/seed{s}.json" for s in seeds(cfg)]


def diag_targets(cfg: dict, prefix: str = "results/gtp/models") -> list[str]:
    return [f"{prefix}/seed{s}.value.json" for s in seeds(cfg)]


def diag_config(cfg: dict) -> dict[str, Any]:
    return {"maze": cfg["maze"], "step": cfg["step"]}


def data_config(cfg: dict) -> dict[str, Any]:
    return {"maze": cfg["maze"], "step": cfg["step"], "dataset": cfg["dataset"]}


def train_config(cfg: dict) -> dict[str, Any]:
    return {"model": cfg["model"], "diffusion": cfg["diffusion"], "horizon": cfg["plan"]["horizon"]}


def eval_config(cfg: dict) -> dict[str, Any]:
    keys = ("maze", "step", "buckets", "episodes_per_bucket", "limit_factor", "methods", "budgets", "plan")
    return {k: cfg[k] for k in keys}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    return {"main_n_samples": cfg["plan"]["n_samples"]}


# classic-control tasks (gymnasium): one dataset, one set of models and one evaluation per (task, seed)
def control_tasks(cfg: dict) -> list[str]:
    return list(cfg.get("control", {}).get("tasks", []))


def control_eval_targets(cfg: dict, prefix: str = "results/gtp/control") -> list[str]:
    n = cfg["control"].get("seeds", cfg["seeds"]) if control_tasks(cfg) else 0
    return [f"{prefix}/{t}/eval/seed{s}.json" for t in control_tasks(cfg) for s in range(n)]


def control_data_config(cfg: dict) -> dict[str, Any]:
    return {"dataset": cfg["control"]["dataset"]}


def control_train_config(cfg: dict) -> dict[str, Any]:
    c = cfg["control"]
    # dense rewards (Pendulum's cost, MountainCar's action cost and goal bonus): a regression reward model
    return {"model": {**c["model"], "binary_reward": False}, "diffusion": c["diffusion"], "horizon": c["plan"]["horizon"]}


def control_eval_config(cfg: dict) -> dict[str, Any]:
    c = cfg["control"]
    return {"episodes": c["episodes"], "length": c["dataset"]["length"], "methods": c["methods"], "plan": c["plan"]}
