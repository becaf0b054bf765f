"""matt's fig1 (recovery vs training budget per method) and table1 (recovery at fixed budgets)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import method_color

__all__ = ["fig1", "table1"]

LABELS = {"mc": "multiple choice", "gen": "completion", "bpc": "bits per character"}


def fig1(table: pd.DataFrame) -> plt.Figure:
    fig, axes = plt.subplots(1, 3, figsize=(9.6, 3.0), sharex=True)
    for ax, task in zip(axes, ("mc", "gen", "bpc")):
        for method, sub in table.groupby("method", sort=False):
            ax.plot(sub.tokens, sub[f"recovery_{task}"], marker="o", label=method, color=method_color(method))
        ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
        ax.set_title(LABELS[task])
        ax.set_xlabel("training budget (target tokens)")
    axes[0].set_ylabel("recovery (fraction of source)")
    axes[-1].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    cols = ["method", "budget_tokens", "tokens", "cpu_s", "recovery_mc", "recovery_gen", "recovery_bpc", "bpc"]
    return table[cols].reset_index(drop=True)
