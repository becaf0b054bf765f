"""The modellens DAG's grid (one leaderboard, or one split of a real dump, per seed) and each rule's part of the preset.

Imported by ``workflow/rules/modellens.smk`` at parse time: standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SOURCES", "DUMP", "seeds", "run_targets", "ablation_targets", "targets", "check_remote", "embed_config",
           "run_config", "ablation_config", "aggregate_config"]

SOURCES = ("synthetic", "remote")
DUMP = "resources/modellens/remote/leaderboard.csv"   # the fetched, validated dump (source: remote)


def seeds(cfg: dict) -> list[int]:
    """The units: seed indices 0..seeds-1 (each one leaderboard or one split of the dump, shared by every method)."""
    return list(range(cfg["seeds"]))


def run_targets(cfg: dict, prefix: str = "results/modellens/runs") -> list[str]:
    return [f"{prefix}/seed{s}.json" for s in seeds(cfg)]


def ablation_targets(cfg: dict) -> list[str]:
    return run_targets(cfg, "results/modellens/ablations") if cfg.get("ablations") else []


def targets(source: str) -> list[str]:
    """Final targets: Fig. 2 (probe cost) and Fig. 3 (per-query routing) need what only synthetic data has."""
    out = ["reports/modellens_fig1.pdf", "reports/modellens_table1.csv", "reports/modellens_table1.md",
           "reports/modellens_ablations.csv", "reports/modellens_ablations.md", "results/modellens/metrics.json"]
    if source == "synthetic":
        out[1:1] = ["reports/modellens_fig2.pdf", "reports/modellens_fig3.pdf"]
    return out


def check_remote(block: dict) -> dict[str, Any]:
    """``modellens.remote`` ({url, sha256}) for ``source: remote``; an unusable one is a ValueError naming it."""
    remote = block.get("remote") or {}
    unknown = sorted(set(remote) - {"url", "sha256"})
    if unknown:
        raise ValueError(f"config: modellens.remote has unknown key(s) {unknown}; expected url and sha256")
    url = remote.get("url")
    if not url:
        raise ValueError("config: modellens.source is 'remote' but modellens.remote.url is not set (a local path "
                         "or an http(s) URL of a long-format CSV: model, dataset, metric, value)")
    url = str(url)
    if url.startswith(("http://", "https://")) and not remote.get("sha256"):
        raise ValueError(f"config: modellens.remote.sha256 is required for a download ({url})")
    return {"url": url, "sha256": remote.get("sha256") or None}


def embed_config(cfg: dict) -> dict[str, Any]:
    """What the text-embedding job reads: the leaderboard generator, the seeds, the encoder."""
    return {"leaderboard": cfg["leaderboard"], "seeds": cfg["seeds"], "text_encoder": cfg["text_encoder"]}


def run_config(cfg: dict) -> dict[str, Any]:
    """What one seed's main run reads."""
    keys = ("leaderboard", "methods", "method_options", "n_probe", "ks", "budget_fracs", "routing", "real")
    return {k: cfg[k] for k in keys if k in cfg}


def ablation_config(cfg: dict) -> dict[str, Any]:
    """What one seed's ablation job reads: the data, ModelLens' options and the variants."""
    keys = ("leaderboard", "method_options", "ks", "real", "ablations")
    return {k: cfg[k] for k in keys if k in cfg}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    return {"main_k": cfg["main_k"], "claim_budget_frac": cfg["claim_budget_frac"], "routing_k": cfg["routing_k"]}
