"""The groupfdr DAG's grid and the part of the preset each rule receives (pure Python, parse time).

``workflow/rules/groupfdr.smk`` imports this module while Snakemake parses the workflow, so it uses
the standard library only. Each ``*_config`` function returns a preset with the same layout as the
whole ``groupfdr.<scale>`` block, cut down to the keys that rule reads: a rule reruns when its part
changes (Snakemake compares params), not when a figure-only key such as ``figure_q`` or a setting's
``sweeps`` changes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SIM_KEYS", "RUNTIME_METHODS", "chunk_targets", "replicates_of_chunk", "run_config",
           "aggregate_config", "runtime_config", "figure_config", "symmetry_targets", "symmetry_config"]

#: Keys of a setting that are arguments of :func:`repro.papers.groupfdr.synth.simulate_grouped`.
SIM_KEYS = ("n", "p", "d", "rho_within", "rho_between", "n_true", "amplitude", "response", "link", "sampling",
            "noise")
#: Keys of a setting that only the aggregate reads (claims' families, Fig. 1 placement).
SUMMARY_KEYS = ("family", "correlated", "sweeps")
#: The methods timed by the runtime benchmark.
RUNTIME_METHODS = ("group_gm", "group_knockoff")


def chunk_targets(cfg: dict, prefix: str = "results/groupfdr/runs") -> list[str]:
    """Every chunk file of the grid setting x method x chunk (the aggregate's inputs)."""
    return [f"{prefix}/{s}/{m}/chunk{c}.json" for s, spec in cfg["settings"].items()
            for m in spec["methods"] for c in range(cfg["chunks"])]


def replicates_of_chunk(cfg: dict, chunk: int) -> range:
    """The replicate indices of ``chunk``: ``cfg["replicates"]`` split into ``cfg["chunks"]`` runs."""
    per = -(-cfg["replicates"] // cfg["chunks"])
    return range(chunk * per, min(cfg["replicates"], (chunk + 1) * per))


def _method_options(cfg: dict, methods) -> dict[str, Any]:
    options = cfg.get("method_options", {})
    return {m: options[m] for m in methods if m in options}


def _simulation(spec: dict) -> dict[str, Any]:
    return {k: spec[k] for k in SIM_KEYS if k in spec}


def run_config(cfg: dict, setting: str, method: str) -> dict[str, Any]:
    """What one chunk job reads: the grid sizes, the levels, the simulator call of ``setting`` and
    the options of ``method``."""
    return {"replicates": cfg["replicates"], "chunks": cfg["chunks"], "qs": cfg["qs"],
            "settings": {setting: _simulation(cfg["settings"][setting])},
            "method_options": _method_options(cfg, [method])}


def aggregate_config(cfg: dict) -> dict[str, Any]:
    """What the aggregate reads besides the chunk files: each setting's family, correlation flag and
    Fig. 1 placement."""
    return {"settings": {s: {k: spec[k] for k in SUMMARY_KEYS if k in spec} for s, spec in cfg["settings"].items()}}


def runtime_config(cfg: dict) -> dict[str, Any]:
    """What the runtime benchmark reads: its setting's simulator call, the replicates, the options of
    the timed methods."""
    setting = cfg["runtime_setting"]
    return {"runtime_setting": setting, "runtime_replicates": cfg["runtime_replicates"],
            "settings": {setting: _simulation(cfg["settings"][setting])},
            "method_options": _method_options(cfg, RUNTIME_METHODS)}


def figure_config(cfg: dict) -> dict[str, Any]:
    """What Fig. 1 and Fig. 2 read from the preset: the level they draw."""
    return {"figure_q": cfg["figure_q"]}


def symmetry_targets(cfg: dict, prefix: str = "results/groupfdr/symmetry") -> list[str]:
    """One file per design of the null-sign-symmetry grid (Table 3's inputs)."""
    return [f"{prefix}/{design}.json" for design in cfg["symmetry"]["designs"]]


def symmetry_config(cfg: dict, design: str) -> dict[str, Any]:
    """What one symmetry job reads: the replicates, levels, methods and its design's simulator call."""
    sym = cfg["symmetry"]
    return {"replicates": sym["replicates"], "qs": sym["qs"], "methods": sym["methods"],
            "designs": {design: _simulation(sym["designs"][design])},
            "method_options": {m: sym.get("method_options", {})[m] for m in sym["methods"]
                               if m in sym.get("method_options", {})}}
