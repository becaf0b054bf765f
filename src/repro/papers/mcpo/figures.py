"""mcpo figures: Fig. 1 (pass@1 and pass@k vs alpha) and Fig. 2 (mode coverage and divergence vs alpha).

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV). Only task (i) is
built; the LM tasks (ii, iii) are not, and the figures say so in their titles.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import Palette

__all__ = ["COLORS", "curve_table", "fig1", "fig2"]

COLORS = Palette({"mcpo": "#D55E00", "rloo": "#0072B2", "pi_star": "#000000", "pi_ref": "#888888"})
REFERENCES = {"rloo": "reverse-KL RLOO", "pi_star": "oracle pi*", "pi_ref": "floor pi_ref"}


def curve_table(tidy: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Mean and s.e. over seeds of each metric per method (alpha NaN for the references), long form."""
    out = []
    for (method, metric), part in tidy.melt(id_vars=["seed", "method", "alpha"], value_vars=metrics,
                                            var_name="metric").groupby(["method", "metric"], sort=True):
        n = len(part)
        out.append({"task": "bandit", "method": method, "alpha": part.alpha.iloc[0], "metric": metric,
                    "mean": part.value.mean(), "se": part.value.std(ddof=1) / np.sqrt(n) if n > 1 else 0.0,
                    "n_seeds": n})
    return pd.DataFrame(out).sort_values(["metric", "alpha", "method"], na_position="last").reset_index(drop=True)


def _panel(ax, table: pd.DataFrame, metric: str, label: str) -> None:
    part = table[table.metric == metric]
    curve = part[part.alpha.notna()].sort_values("alpha")
    ax.errorbar(curve.alpha, curve["mean"], yerr=curve.se, color=COLORS("mcpo"), marker="o", ms=3, capsize=2,
                label="MCPO")
    for ref, name in REFERENCES.items():
        row = part[part.method == ref]
        if len(row):
            if ref == "rloo":
                ax.errorbar([0.0], row["mean"], yerr=row.se, color=COLORS(ref), marker="s", ms=4, capsize=2,
                            linestyle="none", label=name)
            else:
                ax.axhline(row["mean"].iloc[0], color=COLORS(ref), linestyle="--", linewidth=0.8, label=name)
    ax.set_xlabel("alpha (0: reverse KL, 1: forward KL)")
    ax.set_ylabel(label)


def fig1(table: pd.DataFrame, k: int):
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 2.8))
    _panel(axes[0], table, "pass1", "pass@1")
    _panel(axes[1], table, f"pass{k}", f"pass@{k}")
    axes[0].legend(fontsize=6)
    fig.suptitle("task (i) bandit; tasks (ii) arithmetic and (iii) safety not run", fontsize=8)
    fig.tight_layout()
    return fig


def fig2(table: pd.DataFrame):
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 2.8))
    _panel(axes[0], table, "coverage", "mode coverage of pi*")
    axes[0].legend(fontsize=6)
    for metric, marker, name in (("kl_reverse", "o", "KL(pi || pi*)"), ("kl_forward", "^", "KL(pi* || pi)")):
        curve = table[(table.metric == metric) & table.alpha.notna()].sort_values("alpha")
        axes[1].errorbar(curve.alpha, curve["mean"], yerr=curve.se, color=COLORS("mcpo"), marker=marker, ms=3,
                         capsize=2, label=f"MCPO {name}")
    axes[1].set_xlabel("alpha (0: reverse KL, 1: forward KL)")
    axes[1].set_ylabel("divergence to pi*")
    axes[1].legend(fontsize=6)
    fig.suptitle("task (i) bandit; tasks (ii) arithmetic and (iii) safety not run", fontsize=8)
    fig.tight_layout()
    return fig
