"""The modellens DAG's grid (one leaderboard per seed) and each rule's part of the preset.

Imported by ``workflow/rules/modellens.smk`` at parse time: standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["seeds", "run_targets", "embed_config", "run_config", "aggregate_config"]


def seeds(cfg: dict) -> list[int]:
    """The units: seed indices 0..seeds-1 (each one leaderboard, shared by every method)."""
    return list(range(cfg["seeds"]))


def run_targets(cfg: dict, prefix: str = "results/modellens/runs") -> list[str]:
    return [f"{prefix}/seed{s}.json" for s in seeds(cfg)]


def embed_config(cfg: dict) -> dict[str, Any]:
    """What the text-embedding job reads: the leaderboard generator, the seeds, the encoder."""
    return {"leaderboard": cfg["leaderboard"], "seeds": cfg["seeds"], "text_encoder": cfg["text_encoder"]}


def run_config(cfg: dict) -> dict[str, Any]:
    """What one seed's job reads."""
    keys = ("leaderboard", "methods", "method_options", "n_probe", "ks", "budget_fracs", "routing")
    return {k: cfg[k] for k in keys if k in cfg}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    return {"main_k": cfg["main_k"], "claim_budget_frac": cfg["claim_budget_frac"], "routing_k": cfg["routing_k"]}
