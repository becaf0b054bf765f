"""The opinion grid as paths (pure Python: read by workflow/rules/opinion.smk at parse time)."""

from __future__ import annotations

from typing import Any

__all__ = ["agent_runs", "baseline_runs", "alpha_tag"]


def alpha_tag(alpha: float) -> str:
    """The {alpha} wildcard of a truth weight: 0.25 -> '0.25', 1.0 -> '1'."""
    return f"{float(alpha):g}"


def agent_runs(preset: dict[str, Any]) -> list[str]:
    """Every learned agent's record: other-play agents on the whole sweep, the ablation at its alphas."""
    runs = [f"results/opinion/agents/{f}/alpha{alpha_tag(a)}/marl/seed{s}.json"
            for f in preset["families"] for a in preset["alphas"] for s in preset["seeds"]]
    ab = preset["ablation"]
    runs += [f"results/opinion/agents/{f}/alpha{alpha_tag(a)}/marl_noop/seed{s}.json"
             for f in ab["families"] for a in ab["alphas"] for s in preset["seeds"]]
    # the ablation's alphas need the other-play agent too, even outside the sweep
    runs += [f"results/opinion/agents/{f}/alpha{alpha_tag(a)}/marl/seed{s}.json"
             for f in ab["families"] for a in ab["alphas"] for s in preset["seeds"]]
    return list(dict.fromkeys(runs))


def baseline_runs(preset: dict[str, Any]) -> list[str]:
    return [f"results/opinion/baselines/{f}/alpha{alpha_tag(a)}.json" for f in preset["families"] for a in preset["alphas"]]
