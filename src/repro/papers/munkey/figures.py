"""munkey figures: Fig. 1 (forget accuracy and MIA AUC vs fraction of keys deleted, against the oracle).

The builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import Palette, mean_se

__all__ = ["COLORS", "fig1", "fig1_table"]

COLORS = Palette({"munkey": "#D55E00", "oracle_memory": "#000000"})


def fig1_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """Mean and s.e. over seeds per (regime, fraction, method, metric)."""
    long = sweep.melt(id_vars=["regime", "fraction", "method", "seed"], value_vars=["acc_forget", "mia_auc"],
                      var_name="metric")
    return mean_se(long, ["regime", "metric", "method", "fraction"], "value")


def fig1(table: pd.DataFrame):
    regimes = sorted(set(table.regime))
    fig, axes = plt.subplots(len(regimes), 2, figsize=(6.5, 2.6 * len(regimes)), squeeze=False)
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
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig
