"""groupfdr Fig. 1: empirical FDR (top) and power (bottom) against rho and against the amplitude."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import METHOD_COLORS, method_color

__all__ = ["build"]


def build(table: pd.DataFrame, q: float):
    """``table``: tidy rows (sweep, x, method, q, fdr, fdr_se, power, power_se); plots level ``q``."""
    sweeps = [s for s in ("correlation", "amplitude") if s in set(table.sweep)]
    fig, axes = plt.subplots(2, len(sweeps), figsize=(3.2 * len(sweeps), 4.6), squeeze=False, sharey="row")
    sub = table[table.q == q]
    for col, sweep in enumerate(sweeps):
        part = sub[sub.sweep == sweep]
        for method, grp in part.groupby("method", sort=True):
            grp = grp.sort_values("x")
            for row, (key, se) in enumerate((("fdr", "fdr_se"), ("power", "power_se"))):
                # our variants (no fixed colour) are dashed: a hashed colour may repeat a fixed one
                axes[row, col].errorbar(grp.x, grp[key], yerr=grp[se], color=method_color(method), marker="o",
                                        capsize=2, label=method, ls="-" if method in METHOD_COLORS else "--")
        axes[0, col].axhline(q, color="black", ls="--", lw=0.8, label=f"q = {q:g}")
        axes[0, col].set_title(f"{sweep} sweep")
        axes[1, col].set_xlabel("rho (within; between = rho/2)" if sweep == "correlation" else "signal amplitude")
    axes[0, 0].set_ylabel("empirical FDR")
    axes[1, 0].set_ylabel("power")
    axes[1, 0].set_ylim(-0.02, 1.02)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 6), bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    return fig
