"""The opinion grid as paths (pure Python: read by workflow/rules/opinion.smk at parse time)."""

from __future__ import annotations

from typing import Any

__all__ = ["SOURCES", "REMOTE_STEM", "agent_runs", "baseline_runs", "alpha_tag", "remote_config", "remote_edges"]

SOURCES = ("synthetic", "remote")
REMOTE_STEM = "resources/opinion/remote/edges"
"""the fetched, validated edge list (source: remote) is REMOTE_STEM + '.csv' or '.parquet'"""


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


def remote_config(preset: dict[str, Any], source: str, scale: str) -> dict[str, Any] | None:
    """The preset's ``remote`` block ({url, sha256, format}) for ``source: remote``; None for synthetic.

    The schema checks the block's fields; a remote source without the block is a ValueError naming it.
    """
    if source != "remote":
        return None
    remote = preset.get("remote")
    if not remote:
        raise ValueError(f"config: opinion.source is 'remote' but opinion.{scale}.remote (url, sha256) is missing; "
                         "set it to the edge list's address and checksum (see config.yaml's opinion comment)")
    url = remote["url"]
    fmt = remote.get("format") or ("parquet" if url.split("?")[0].lower().endswith((".parquet", ".pq")) else "csv")
    return {"url": url, "sha256": remote["sha256"], "format": fmt}


def remote_edges(remote: dict[str, Any] | None) -> str | None:
    """Where rule opinion_fetch puts the edge list (its suffix tells :func:`load_edge_list` the format)."""
    return None if remote is None else f"{REMOTE_STEM}.{remote['format']}"
