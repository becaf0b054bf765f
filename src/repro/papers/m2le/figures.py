"""m2le figures: Fig. 1 (task-1 accuracy and running average over the sequence) and Fig. 2
(distribution of HIM's element-wise modulation per layer, with the scalar optimum marked).

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import pandas as pd

from repro.figures.style import FLOOR, REFERENCE, Palette, legend, mean_se, n_text, panel_letters, se_err, subplots

__all__ = ["COLORS", "fig1_table", "fig1", "fig2_table", "fig2"]

COLORS = Palette("m2le", {"him": "#E69F00", "pm": "#0072B2", "fixed": "#56B4E9", "seq": FLOOR, "olora": "#009E73",
                          "ewc": "#CC79A7", "joint": REFERENCE}, ours="m2le")
ORDER = ("m2le", "him", "pm", "fixed", "olora", "ewc", "seq", "joint")
LABELS = {"m2le": "M²LE (HIM+TSP)", "him": "HIM", "pm": "P&M scalar", "fixed": "fixed scalar", "seq": "sequential",
          "olora": "O-LoRA", "ewc": "EWC", "joint": "joint (ceiling)"}


def fig1_table(curve: pd.DataFrame) -> pd.DataFrame:
    """Mean and s.e. over seeds per (sequence, method, after_task, metric)."""
    long = curve.melt(id_vars=["sequence", "seed", "method", "after_task"], value_vars=["task1_acc", "running_avg"],
                      var_name="metric")
    return mean_se(long, ["sequence", "metric", "method", "after_task"], "value")


def fig1(table: pd.DataFrame):
    sequences = sorted(set(table.sequence))
    fig, axes = subplots(len(sequences), 2, width="text", height=0.5 + 1.6 * len(sequences), squeeze=False,
                         sharex=True)
    for row, sequence in enumerate(sequences):
        for col, (metric, label) in enumerate((("task1_acc", "accuracy on task 1"),
                                               ("running_avg", "average accuracy so far"))):
            ax = axes[row, col]
            part = table[(table.sequence == sequence) & (table.metric == metric)]
            methods = [m for m in ORDER if m in set(part.method)] + sorted(set(part.method) - set(ORDER))
            for method in methods:
                g = part[part.method == method]
                style = dict(marker="*", ms=7, ls="none") if len(g) == 1 else dict(marker="o")
                ax.errorbar(g.after_task, g["mean"], yerr=se_err(g["mean"], g["se"], bounds=(0, 1)), color=COLORS(method),
                            label=LABELS.get(method, method), **style)
            if row == len(sequences) - 1:
                ax.set_xlabel("after task")
            ax.set_ylabel(label)
            ax.set_title(sequence)
    panel_letters(axes.flat)
    legend(fig, where="right", title=f"mean ± s.e.\nover seeds,\n{n_text(table.n_seeds, 'seed')}")
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
    fig, axes = subplots(len(sequences), len(layers), width="text", height=0.6 + 1.3 * len(sequences), squeeze=False,
                         sharex=True, sharey=True)
    shown = []
    for r, sequence in enumerate(sequences):
        for c, layer in enumerate(layers):
            ax = axes[r, c]
            g = table[(table.sequence == sequence) & (table.layer == layer)]
            if g.empty and c > 0:  # this sequence's model has fewer layers: no panel
                ax.remove()
                continue
            shown.append(ax)
            ax.bar(g.bin_low, g.share, width=g.bin_high - g.bin_low, align="edge", color=COLORS("m2le"),
                   label="HIM modulation (M²LE)")
            if len(g):
                ax.axvline(g.alpha_mean.iloc[0], color=COLORS("pm"), ls="--", label="P&M scalar (mean)")
            ax.set_xlabel("modulation m")
            if c == 0:
                ax.set_ylabel(f"{sequence}:\nshare of elements")
            ax.set_title(f"layer {layer}")
    panel_letters(shown)
    legend(fig, where="below", ncol=2)
    return fig
