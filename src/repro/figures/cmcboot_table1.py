"""cmcboot Table 1: coverage and mean width of every method, target and setting (one row per
setting x target x level, two columns per method)."""

from __future__ import annotations

import pandas as pd

from repro.figures.cmcboot_fig1 import METHOD_ORDER

__all__ = ["build"]


def build(table: pd.DataFrame) -> pd.DataFrame:
    """Wide table from the long coverage table."""
    index = ["policy", "n", "episode_length", "target", "level"]
    wide = table.pivot_table(index=index, columns="method", values=["coverage", "width"], aggfunc="first")
    methods = [m for m in METHOD_ORDER if m in set(table["method"])]
    columns = {}
    for m in methods:
        columns[f"{m} coverage"] = wide[("coverage", m)]
        columns[f"{m} width"] = wide[("width", m)]
    out = pd.DataFrame(columns).reset_index()
    return out.sort_values(index).reset_index(drop=True)
