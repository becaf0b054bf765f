"""munkey figures: Fig. 1 (forget accuracy and MIA AUC vs fraction of keys deleted, against the oracle).

The builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import pandas as pd

from repro.figures.style import REFERENCE, Palette, legend, mean_se, n_text, panel_letters, subplots

__all__ = ["COLORS", "fig1", "fig1_table"]

COLORS = Palette("munkey", {"oracle_memory": REFERENCE}, ours="munkey")


def fig1_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """Mean and s.e. over seeds per (regime, fraction, method, metric)."""
    long = sweep.melt(id_vars=["regime", "fraction", "method", "seed"], value_vars=["acc_forget", "mia_auc"],
                      var_name="metric")
    return mean_se(long, ["regime", "metric", "method", "fraction"], "value")


def fig1(table: pd.DataFrame):
    regimes = sorted(set(table.regime))
    fig, axes = subplots(len(regimes), 2, width="text", height=0.5 + 1.9 * len(regimes), squeeze=False)
    for row, regime in enumerate(regimes):
        for col, (metric, label) in enumerate((("acc_forget", "forget-set accuracy"), ("mia_auc", "MIA AUC"))):
            ax = axes[row, col]
            for method, g in table[(table.regime == regime) & (table.metric == metric)].groupby("method"):
                ax.errorbar(g.fraction, g["mean"], yerr=g["se"], marker="o", color=COLORS(method),
                            label="MUNKEY (keys deleted)" if method == "munkey" else "retrain oracle (memory model)")
            ax.set_xscale("log")
            ax.set_xlabel("fraction of keys deleted")
            ax.set_ylabel(label)
            ax.set_title(regime)
    panel_letters(axes.flat)
    legend(fig, where="below", ncol=2, title=f"mean ± s.e. over seeds, {n_text(table.n_seeds, 'seed')}")
    return fig
