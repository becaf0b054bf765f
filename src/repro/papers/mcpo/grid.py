"""The mcpo DAG's grid (one task instance per seed) and each rule's part of the preset.

Imported by ``workflow/rules/mcpo.smk`` at parse time: standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LM_TASKS", "seeds", "run_targets", "run_config", "aggregate_config", "task_targets", "task_config",
           "task_base"]

#: The language-model tasks, each an optional block of the preset, and the keys its per-seed job reads.
LM_TASKS = {
    "arithmetic": ("model", "task", "train", "alphas", "ks", "mode_mass", "cover_mass", "reverse_kl_baseline"),
    "safety": ("model", "task", "train", "alphas", "ks", "references", "reverse_kl_baseline"),
}


def seeds(cfg: dict) -> list[int]:
    """The units: seed indices 0..seeds-1 (each one task instance, shared by every alpha and baseline)."""
    return list(range(cfg["seeds"]))


def run_targets(cfg: dict, prefix: str = "results/mcpo/bandit") -> list[str]:
    return [f"{prefix}/seed{s}.json" for s in seeds(cfg)]


def run_config(cfg: dict) -> dict[str, Any]:
    """What one seed's job of task (i) reads."""
    keys = ("task", "train", "alphas", "ks", "mode_mass", "cover_mass", "reverse_kl_baseline")
    return {k: cfg["bandit"][k] for k in keys if k in cfg["bandit"]}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    out = {"alphas": cfg["bandit"]["alphas"], "ks": cfg["bandit"]["ks"], "claim_k": cfg["claim_k"]}
    for task in LM_TASKS:
        if task in cfg:
            out[task] = {"alphas": cfg[task]["alphas"], "ks": cfg[task]["ks"]}
    return out


def task_targets(cfg: dict, task: str) -> list[str]:
    """A language-model task's per-seed results (``arithmetic`` or ``safety``; none when the preset lacks it)."""
    if task not in cfg:
        return []
    return [f"results/mcpo/{task}/seed{s}.json" for s in range(cfg[task]["seeds"])]


def task_base(cfg: dict, task: str) -> str:
    """A language-model task's base model weights: a tiny model trained here, or the cached pretrained one."""
    model = cfg[task]["model"]
    if model["kind"] == "tiny":
        return f"results/mcpo/{task}/tiny/model.safetensors"
    return f"resources/llm/{model['name']}/model.safetensors"


def task_config(cfg: dict, task: str) -> dict[str, Any]:
    """What one seed's job of a language-model task reads."""
    return {k: cfg[task][k] for k in LM_TASKS[task] if k in cfg[task]}
