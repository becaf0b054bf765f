"""cmcboot Fig. 2: coverage vs episode length at a fixed total sample size."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.cmcboot_fig1 import coverage_grid

__all__ = ["build"]


def build(table: pd.DataFrame, *, sample_size: int) -> tuple[plt.Figure, pd.DataFrame]:
    """Fig. 2 from the long coverage table; returns the figure and the rows it plots."""
    plotted = table[table["n"] == sample_size].sort_values(
        ["target", "level", "method", "policy", "episode_length"]).reset_index(drop=True)
    if plotted.empty:
        raise ValueError(f"cmcboot fig2: no rows with n={sample_size}")
    fig = coverage_grid(plotted, "episode_length", "episode length (steps)",
                        f"RiverSwim: coverage vs episode length ({sample_size} transitions)")
    return fig, plotted
