"""MDA-DD Fig. 1: TR@1 and IR@1 against the number of distilled pairs, full-data training on top."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import method_color

__all__ = ["build", "plot_table"]


def plot_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd over unseen initialisations of TR@1 and IR@1 per method and size."""
    sel = tidy[(tidy["init"] == "unseen") & tidy["metric"].isin(["TR@1", "IR@1"])]
    return sel.groupby(["metric", "method", "n_pairs"])["value"].agg(["mean", "std"]).reset_index()


def build(table: pd.DataFrame) -> plt.Figure:
    """``table``: output of :func:`plot_table` (columns metric, method, n_pairs, mean, std)."""
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 2.8), sharey=False)
    for ax, metric in zip(axes, ["TR@1", "IR@1"]):
        t = table[table["metric"] == metric]
        for method, g in t[t["method"] != "full"].groupby("method", sort=True):
            g = g.sort_values("n_pairs")
            ax.errorbar(g["n_pairs"], g["mean"], yerr=g["std"].fillna(0), marker="o", capsize=2,
                        color=method_color(method), label=method)
        full = t[t["method"] == "full"]
        if len(full):
            ax.axhline(float(full["mean"].iloc[0]), color=method_color("full"), ls="--", label="full data")
        ax.set_xscale("log")
        sizes = sorted(t.loc[t["method"] != "full", "n_pairs"].unique())
        ax.set_xticks(sizes, [str(s) for s in sizes])
        ax.minorticks_off()
        ax.set_xlabel("distilled pairs")
        ax.set_ylabel(f"{metric} (%)")
        ax.set_title(f"{metric}, unseen initialisations")
    axes[1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig
