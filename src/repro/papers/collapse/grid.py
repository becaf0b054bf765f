"""The collapse DAG's grid and the part of the preset each rule receives (pure Python, parse time).

``workflow/rules/collapse.smk`` imports this module while Snakemake parses the workflow, so it uses
the standard library only. A recursion job is one (injection fraction, replicate); the replicates
below ``diagnose_replicates`` of each fraction in ``diagnose_injections`` also get the Fisher and
LLC diagnostics.
"""

from __future__ import annotations

from typing import Any

__all__ = ["GRID_KEYS", "AGGREGATE_KEYS", "injection_label", "run_targets", "run_config", "aggregate_config",
           "is_diagnosed", "neural_targets", "neural_run_config", "neural_data_config"]

#: Preset keys that lay out the grid or request cluster time: the DAG's, not a run's settings.
GRID_KEYS = ("injections", "replicates", "diagnose_injections", "diagnose_replicates", "survival_level", "runtime_min",
             "neural")
#: Keys of the ``neural`` block that lay out its grid or its data, not a neural run's settings.
NEURAL_GRID_KEYS = ("models", "injections", "seeds", "remote", "runtime_min")
#: Preset keys the aggregate reads.
AGGREGATE_KEYS = ("survival_level",)


def injection_label(inject: float) -> str:
    """The wildcard spelling of an injection fraction: 0.05 -> "0.05", 0.0 -> "0"."""
    return f"{float(inject):g}"


def run_targets(cfg: dict, prefix: str = "results/collapse/runs") -> list[str]:
    """Every run file: injections x replicates (a diagnosed fraction outside the grid is an error)."""
    grid = {injection_label(a) for a in cfg["injections"]}
    stray = [a for a in cfg.get("diagnose_injections", []) if injection_label(a) not in grid]
    if stray:
        raise ValueError(f"config: collapse.diagnose_injections {stray} are not in collapse.injections {cfg['injections']}")
    return [f"{prefix}/inject{injection_label(a)}/rep{r}.json" for a in cfg["injections"] for r in range(cfg["replicates"])]


def is_diagnosed(cfg: dict, inject: str, replicate: int) -> bool:
    """Whether run (inject, replicate) gets the Fisher and LLC diagnostics."""
    labels = {injection_label(a) for a in cfg["diagnose_injections"]}
    return inject in labels and int(replicate) < cfg["diagnose_replicates"]


def run_config(cfg: dict) -> dict[str, Any]:
    """What a recursion job reads: every run setting (the keys of ``CollapseConfig``), none of the grid's."""
    return {k: v for k, v in cfg.items() if k not in GRID_KEYS}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    return {k: cfg[k] for k in AGGREGATE_KEYS}


def neural_targets(cfg: dict, prefix: str = "results/collapse/neural") -> list[str]:
    """Every neural run file: models x fresh-data fractions x seeds (none without a ``neural`` block)."""
    nc = cfg.get("neural")
    if not nc:
        return []
    if float(nc["injections"][0]) != 0.0:
        raise ValueError(f"config: collapse.neural.injections must start with 0 (synthetic only); got {nc['injections']}")
    return [f"{prefix}/{m}/inject{injection_label(a)}/seed{s}.json"
            for m in nc["models"] for a in nc["injections"] for s in range(nc["seeds"])]


def neural_run_config(cfg: dict) -> dict[str, Any]:
    """What a neural job reads: the ``neural`` block minus its grid and data keys."""
    return {k: v for k, v in cfg["neural"].items() if k not in NEURAL_GRID_KEYS}


def neural_data_config(cfg: dict, source: str) -> dict[str, Any]:
    """What the data job reads: the source and, for ``remote``, the image set's url, sha256 and size."""
    if source == "remote" and "remote" not in cfg["neural"]:
        raise ValueError("config: collapse.source is 'remote' but collapse.<scale>.neural.remote (url, sha256) is missing")
    return {"source": source, "remote": cfg["neural"].get("remote")}
