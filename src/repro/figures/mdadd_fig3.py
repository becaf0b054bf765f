"""MDA-DD Fig. 3: measured cost of the cross-modal second moment, SOCM (Gram form) vs the full matrix."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

__all__ = ["build"]

STYLE = {"socm": ("#D55E00", "SOCM (Gram form)"), "naive": ("#0072B2", "full moment matrix")}


def build(cost: pd.DataFrame) -> plt.Figure:
    """``cost``: columns dim, form (socm / naive), time_s, memory_bytes."""
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 2.6))
    for form, g in cost.groupby("form"):
        color, label = STYLE.get(form, ("#888888", form))
        g = g.sort_values("dim")
        axes[0].plot(g["dim"], g["time_s"] * 1e3, marker="o", color=color, label=label)
        axes[1].plot(g["dim"], g["memory_bytes"] / 2**20, marker="o", color=color, label=label)
    for ax, ylabel in zip(axes, ["time, forward + backward (ms)", "intermediate memory (MiB)"]):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("feature dimension d")
        ax.set_ylabel(ylabel)
    axes[0].set_title("measured time")
    axes[1].set_title("moment intermediates")
    axes[0].legend()
    fig.tight_layout()
    return fig
