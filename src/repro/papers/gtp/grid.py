"""The gtp DAG's grid (one dataset, one set of learned models and one evaluation per seed) and each rule's part of the preset.

Imported by ``workflow/rules/gtp.smk`` at parse time: standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["seeds", "eval_targets", "eval_inputs", "diag_targets", "diag_config", "data_config", "train_config",
           "goal_policy_config", "td3bc_config",
           "td3bc_diag_targets", "eval_config", "aggregate_config", "control_tasks", "control_eval_targets",
           "control_eval_inputs", "control_data_config", "control_train_config", "control_td3bc_config",
           "control_eval_config", "online_methods", "online_targets", "online_inputs", "online_config", "BLOCKS",
           "SCRIPTED_TASKS", "MUJOCO_TASKS", "control_block"]


def seeds(cfg: dict) -> list[int]:
    """The units: seed indices 0..seeds-1 (each its own dataset and models, shared by every method)."""
    return list(range(cfg["seeds"]))


def eval_targets(cfg: dict, prefix: str = "results/gtp/eval") -> list[str]:
    return [f"{prefix}/seed{s}.json" for s in seeds(cfg)]


def eval_inputs(cfg: dict, seed: str) -> dict[str, str]:
    """Inputs of one maze evaluation: the seed's models, its TD3+BC policy when ``td3bc`` is a method and its
    goal-conditioned diffusion policy when ``diffusion_policy`` is."""
    out = {"models": f"results/gtp/models/seed{seed}.pt"}
    if "td3bc" in cfg["methods"]:
        out["policy"] = f"results/gtp/models/seed{seed}.td3bc.pt"
    if "diffusion_policy" in cfg["methods"]:
        out["goal_policy"] = f"results/gtp/models/seed{seed}.goal_policy.pt"
    return out


def _td3bc(block: dict, model: dict) -> dict[str, Any]:
    """The TD3+BC block, its discount defaulting to the task's planning discount (``model.gamma``, else 0.99)."""
    return {"td3bc": {"gamma": model.get("gamma", 0.99), **block.get("td3bc", {})}}


def td3bc_config(cfg: dict) -> dict[str, Any]:
    return _td3bc(cfg, cfg["model"])


def td3bc_diag_targets(cfg: dict) -> list[str]:
    """Every TD3+BC training-diagnostics file of the build (maze, then each classic-control task), or none."""
    out = [f"results/gtp/models/seed{s}.td3bc.json" for s in seeds(cfg)] if "td3bc" in cfg["methods"] else []
    out += [f"results/gtp/control/{t}/models/seed{s}.td3bc.json" for t in control_tasks(cfg)
            if "td3bc" in control_block(cfg, t)["methods"] for s in _task_seeds(cfg, t)]
    return out


def diag_targets(cfg: dict, prefix: str = "results/gtp/models") -> list[str]:
    return [f"{prefix}/seed{s}.value.json" for s in seeds(cfg)]


def diag_config(cfg: dict) -> dict[str, Any]:
    return {"maze": cfg["maze"], "step": cfg["step"]}


def data_config(cfg: dict) -> dict[str, Any]:
    return {"maze": cfg["maze"], "step": cfg["step"], "dataset": cfg["dataset"]}


def train_config(cfg: dict) -> dict[str, Any]:
    return {"model": cfg["model"], "diffusion": cfg["diffusion"], "horizon": cfg["plan"]["horizon"]}


def goal_policy_config(cfg: dict) -> dict[str, Any]:
    """The maze's goal-conditioned diffusion policy: the prior's DDPM settings and sequence length."""
    return {"diffusion": cfg["diffusion"], "horizon": cfg["plan"]["horizon"]}


def eval_config(cfg: dict) -> dict[str, Any]:
    keys = ("maze", "step", "buckets", "episodes_per_bucket", "limit_factor", "methods", "budgets", "plan")
    return {k: cfg[k] for k in keys}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    return {"main_n_samples": cfg["plan"]["n_samples"]}


# control tasks (gymnasium): one dataset, one set of models and one evaluation per (task, seed). Two blocks of
# the preset hold them: ``control`` (classic control, scripted behaviour data) and ``mujoco`` (behaviour data
# from an online TD3 agent); a task's settings are its block's.
BLOCKS = ("control", "mujoco")
SCRIPTED_TASKS = ("pendulum", "mountaincar")  # behaviour from a scripted controller (repro.papers.gtp.control)
MUJOCO_TASKS = ("halfcheetah", "hopper")  # behaviour from an online TD3 agent


def control_tasks(cfg: dict) -> list[str]:
    """Every control task of the preset, classic control first."""
    return [t for b in BLOCKS for t in cfg.get(b, {}).get("tasks", [])]


def control_block(cfg: dict, task: str) -> dict:
    """The preset block that holds ``task``."""
    for b in BLOCKS:
        if task in cfg.get(b, {}).get("tasks", []):
            return cfg[b]
    raise ValueError(f"gtp: task {task!r} is in no block of the preset ({', '.join(BLOCKS)}.tasks)")


def _task_seeds(cfg: dict, task: str) -> list[int]:
    return list(range(control_block(cfg, task).get("seeds", cfg["seeds"])))


def control_eval_targets(cfg: dict, prefix: str = "results/gtp/control") -> list[str]:
    return [f"{prefix}/{t}/eval/seed{s}.json" for t in control_tasks(cfg) for s in _task_seeds(cfg, t)]


def control_eval_inputs(cfg: dict, task: str, seed: str) -> dict[str, str]:
    """The unit's models, its TD3+BC actor when ``td3bc`` is a method, and a MuJoCo task's behaviour agent
    (its ``expert``)."""
    block = control_block(cfg, task)
    out = {"models": f"results/gtp/control/{task}/models/seed{seed}.pt"}
    if "td3bc" in block["methods"]:
        out["policy"] = f"results/gtp/control/{task}/models/seed{seed}.td3bc.pt"
    if task in MUJOCO_TASKS and "expert" in block["methods"]:
        out["behaviour"] = f"results/gtp/control/{task}/data/seed{seed}.behaviour.pt"
    return out


def control_td3bc_config(cfg: dict, task: str) -> dict[str, Any]:
    block = control_block(cfg, task)
    return _td3bc(block, block["model"])


def control_data_config(cfg: dict, task: str) -> dict[str, Any]:
    return {"dataset": control_block(cfg, task)["dataset"]}


def control_train_config(cfg: dict, task: str) -> dict[str, Any]:
    c = control_block(cfg, task)
    # dense rewards (Pendulum's cost, MountainCar's action cost and goal bonus, MuJoCo's velocity and control
    # terms): a regression reward model
    return {"model": {**c["model"], "binary_reward": False}, "diffusion": c["diffusion"], "horizon": c["plan"]["horizon"]}


def control_eval_config(cfg: dict, task: str) -> dict[str, Any]:
    c = control_block(cfg, task)
    return {"episodes": c["episodes"], "length": c["dataset"]["length"], "methods": c["methods"], "plan": c["plan"]}


# online fine-tuning (repro.papers.gtp.online): one job per (task, method, seed) after the offline models, for the
# tasks of a block with an ``online`` entry
ONLINE_LEARNERS = ("gtp", "mppi", "cem", "diffusion_policy", "td3bc")  # repro.papers.gtp.online.LEARNS


def online_methods(cfg: dict, task: str) -> list[str]:
    """The methods of ``task`` that learn online (none without an ``online`` entry in its block)."""
    block = control_block(cfg, task)
    return [m for m in block["methods"] if m in ONLINE_LEARNERS] if "online" in block else []


def online_targets(cfg: dict, prefix: str = "results/gtp/control") -> list[str]:
    return [f"{prefix}/{t}/online/{m}/seed{s}.json" for t in control_tasks(cfg) for m in online_methods(cfg, t)
            for s in _task_seeds(cfg, t)]


def online_inputs(cfg: dict, task: str, method: str, seed: str) -> dict[str, str]:
    """The unit's offline dataset and the method's offline state (world model + prior, or TD3+BC's actor
    and critic)."""
    out = {"data": f"results/gtp/control/{task}/data/seed{seed}.npz",
           "sha": f"results/gtp/control/{task}/data/seed{seed}.npz.sha256"}
    if method == "td3bc":
        out["policy"] = f"results/gtp/control/{task}/models/seed{seed}.td3bc.pt"
    else:
        out["models"] = f"results/gtp/control/{task}/models/seed{seed}.pt"
    return out


def online_config(cfg: dict, task: str) -> dict[str, Any]:
    return {"online": control_block(cfg, task)["online"], **control_eval_config(cfg, task),
            **control_td3bc_config(cfg, task)}
