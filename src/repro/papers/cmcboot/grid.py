"""The grid of cmcboot's experiment: setting names, and the part of a preset each step reads.

Pure Python (the rule file imports it at parse time). A *setting* is one data design and behaviour
policy, named ``n{n}_h{horizon}_{policy}`` (``n`` transitions in episodes of ``horizon`` steps;
``horizon == n`` is a single chain).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["setting_name", "parse_setting", "settings", "level_key", "preset_part",
           "CHAIN_KEYS", "GRID_KEYS", "TRUTH_KEYS", "INTERVAL_KEYS", "AGGREGATE_KEYS"]

_SETTING = re.compile(r"^n(\d+)_h(\d+)_([a-z]+)$")

#: The chain and the target policy (the true targets depend on these only).
CHAIN_KEYS = ("riverswim", "target_right_prob")
#: The settings of fig1 and fig2 (:func:`settings`).
GRID_KEYS = ("policies", "sample_sizes", "episode_length", "fig2_sample_size", "episode_lengths")
#: The data step: the chain, its true targets and the list of settings.
TRUTH_KEYS = CHAIN_KEYS + GRID_KEYS
#: One chunk of intervals (its setting and method come from the wildcards).
INTERVAL_KEYS = CHAIN_KEYS + ("levels", "n_boot", "unvisited_fill", "max_parallel", "behaviour",
                              "behaviour_estimate", "n_replicates", "n_chunks")
#: The aggregate: coverage table, metrics and the regimes the claims read.
AGGREGATE_KEYS = GRID_KEYS + ("levels", "moderate_sample_size")


def preset_part(cfg: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """The entries of ``cfg`` named in ``keys`` (absent optional keys stay absent, keeping their defaults)."""
    return {k: cfg[k] for k in keys if k in cfg}


def setting_name(n: int, horizon: int, policy: str) -> str:
    return f"n{n}_h{horizon}_{policy}"


def parse_setting(name: str) -> tuple[int, int, str]:
    """``"n1000_h50_uniform"`` -> ``(1000, 50, "uniform")``; the horizon must divide ``n``."""
    m = _SETTING.match(name)
    if not m:
        raise ValueError(f"cmcboot: bad setting name {name!r} (expected n<N>_h<H>_<policy>)")
    n, h, policy = int(m[1]), int(m[2]), m[3]
    if h < 1 or n % h:
        raise ValueError(f"cmcboot: setting {name!r}: episode length {h} must divide the sample size {n}")
    return n, h, policy


def settings(cfg: Mapping[str, Any]) -> list[str]:
    """All settings of a preset: fig1 (sample sizes at the fig1 episode length) and fig2 (episode
    lengths at the fig2 sample size), for every behaviour policy; sorted, without duplicates."""
    names = set()
    for policy in cfg["policies"]:
        names.update(setting_name(n, cfg["episode_length"], policy) for n in cfg["sample_sizes"])
        names.update(setting_name(cfg["fig2_sample_size"], h, policy) for h in cfg["episode_lengths"])
    for name in names:
        parse_setting(name)
    return sorted(names)


def level_key(level: float) -> str:
    """``0.95`` -> ``"l95"`` (metric paths are dotted, so keys carry no dot)."""
    return f"l{round(level * 100):d}"
