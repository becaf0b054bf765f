"""m2le figures: Fig. 1 (task-1 accuracy and running average over the sequence) and Fig. 2
(distribution of HIM's element-wise modulation per layer, with the scalar optimum marked).

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import Palette, mean_se

__all__ = ["COLORS", "fig1_table", "fig1", "fig2_table", "fig2"]

COLORS = Palette({"m2le": "#D55E00", "him": "#E69F00", "pm": "#0072B2", "fixed": "#56B4E9", "seq": "#999999",
                  "olora": "#009E73", "ewc": "#CC79A7", "joint": "#000000"})
LABELS = {"m2le": "M²LE (HIM+TSP)", "him": "HIM", "pm": "P&M scalar", "fixed": "fixed scalar", "seq": "sequential",
          "olora": "O-LoRA", "ewc": "EWC", "joint": "joint (ceiling)"}


def fig1_table(curve: pd.DataFrame) -> pd.DataFrame:
    """Mean and s.e. over seeds per (sequence, method, after_task, metric)."""
    long = curve.melt(id_vars=["sequence", "seed", "method", "after_task"], value_vars=["task1_acc", "running_avg"],
                      var_name="metric")
    return mean_se(long, ["sequence", "metric", "method", "after_task"], "value")


def fig1(table: pd.DataFrame):
    sequences = sorted(set(table.sequence))
    fig, axes = plt.subplots(len(sequences), 2, figsize=(7.0, 2.4 * len(sequences)), squeeze=False)
    for row, sequence in enumerate(sequences):
        for col, (metric, label) in enumerate((("task1_acc", "accuracy on task 1"),
                                               ("running_avg", "average accuracy so far"))):
            ax = axes[row, col]
            for method, g in table[(table.sequence == sequence) & (table.metric == metric)].groupby("method"):
                style = dict(marker="*", ms=9, ls="none") if len(g) == 1 else dict(marker="o", ms=3)
                ax.errorbar(g.after_task, g["mean"], yerr=g["se"], color=COLORS(method),
                            label=LABELS.get(method, method), **style)
            ax.set_xlabel("after task")
            ax.set_ylabel(label)
            ax.set_title(sequence)
    axes[0, 1].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def fig2_table(modulation: pd.DataFrame) -> pd.DataFrame:
    """Share of elements per modulation bin, per (sequence, layer), pooled over the tasks after the first."""
    later = modulation[modulation.task > 1]
    g = later.groupby(["sequence", "layer", "bin_low", "bin_high"], as_index=False)["count"].sum()
    g["share"] = g["count"] / g.groupby(["sequence", "layer"])["count"].transform("sum")
    alpha = later.groupby(["sequence"])["alpha"].mean().rename("alpha_mean")
    return g.merge(alpha, on="sequence")


def fig2(table: pd.DataFrame):
    sequences = sorted(set(table.sequence))
    layers = sorted(set(table.layer))
    fig, axes = plt.subplots(len(sequences), len(layers), figsize=(2.8 * len(layers), 2.2 * len(sequences)),
                             squeeze=False)
    for r, sequence in enumerate(sequences):
        for c, layer in enumerate(layers):
            ax = axes[r, c]
            g = table[(table.sequence == sequence) & (table.layer == layer)]
            ax.bar(g.bin_low, g.share, width=g.bin_high - g.bin_low, align="edge", color=COLORS("m2le"))
            if len(g):
                ax.axvline(g.alpha_mean.iloc[0], color=COLORS("pm"), ls="--", label="P&M scalar (mean)")
            ax.set_xlabel("modulation m")
            ax.set_ylabel("share of elements")
            ax.set_title(f"{sequence}, layer {layer}")
    axes[0, 0].legend(fontsize=6)
    fig.tight_layout()
    return fig
