"""cmcboot Fig. 2: coverage vs episode length at a fixed total sample size."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.cmcboot_fig1 import coverage_figure

__all__ = ["build"]


def build(table: pd.DataFrame, *, sample_size: int) -> tuple[plt.Figure, pd.DataFrame]:
    """Fig. 2 from the long coverage table; returns the figure and the rows it plots."""
    return coverage_figure(table, fixed="n", value=sample_size, x="episode_length", xlabel="episode length (steps)",
                           title=f"RiverSwim: coverage vs episode length ({sample_size} transitions)")
