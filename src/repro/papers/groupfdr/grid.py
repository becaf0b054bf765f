"""The groupfdr DAG's grid and the part of the preset each rule receives (pure Python, parse time).

``workflow/rules/groupfdr.smk`` imports this module while Snakemake parses the workflow, so it uses
the standard library only. Each ``*_config`` function returns a preset with the same layout as the
whole ``groupfdr.<scale>`` block, cut down to the keys that rule reads: a rule reruns when its part
changes (Snakemake compares params), not when a figure-only key such as ``figure_q`` or a setting's
``sweeps`` changes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SIM_KEYS", "STATISTICS_SOURCE", "RUNTIME_METHODS", "chunk_targets", "statistics_input",
           "statistics_source_of", "replicates_of_chunk", "run_config",
           "aggregate_config", "runtime_config", "figure_config", "symmetry_targets", "symmetry_config"]

#: Keys of a setting that are arguments of :func:`repro.papers.groupfdr.synth.simulate_grouped`.
SIM_KEYS = ("n", "p", "d", "rho_within", "rho_between", "n_true", "amplitude", "response", "link", "sampling",
            "noise")
#: Keys of a setting that only the aggregate reads (claims' families, Fig. 1 placement).
SUMMARY_KEYS = ("family", "correlated", "sweeps")
#: Mirror selectors that differ from another only in the selection rule -> that other selector: their
#: run reads its chunk file's per-replicate statistics instead of refitting them (one fit per setting and
#: replicate; ``repro.methods.fdr_selectors.same_statistics`` holds for every pair, a test checks it).
STATISTICS_SOURCE = {"group_gm_plus": "group_gm", "group_gm_stepdown": "group_gm", "gm_stepdown": "gm"}
#: The methods timed by the runtime benchmark.
RUNTIME_METHODS = ("group_gm", "group_knockoff")


def chunk_targets(cfg: dict, prefix: str = "results/groupfdr/runs") -> list[str]:
    """Every chunk file of the grid setting x method x chunk (the aggregate's inputs)."""
    return [f"{prefix}/{s}/{m}/chunk{c}.json" for s, spec in cfg["settings"].items()
            for m in spec["methods"] for c in range(cfg["chunks"])]


def statistics_input(cfg: dict, setting: str, method: str, chunk, prefix: str = "results/groupfdr/runs") -> list[str]:
    """The chunk file whose statistics ``method`` reuses (:data:`STATISTICS_SOURCE`), or none when its
    source is not run in ``setting`` (then it fits its own)."""
    source = STATISTICS_SOURCE.get(method)
    if source is None or source not in cfg["settings"][setting]["methods"]:
        return []
    return [f"{prefix}/{setting}/{source}/chunk{chunk}.json"]


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
            "method_options": _method_options(cfg, [method, *statistics_source_of(cfg, setting, method)])}


def statistics_source_of(cfg: dict, setting: str, method: str) -> list[str]:
    """``[source]`` when ``method`` reuses the statistics of ``source`` in ``setting``, else ``[]``."""
    return [STATISTICS_SOURCE[method]] if statistics_input(cfg, setting, method, 0) else []


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
