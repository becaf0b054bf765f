"""MDA-DD's figures: one builder per figure, each taking the tidy table it plots (written as its CSV).

- Fig. 1 (:func:`fig1`, table from :func:`fig1_table`): TR@1 and IR@1 against the number of
  distilled pairs, full-data training on top.
- Fig. 2 (:func:`fig2`): initialisation overfitting, seen minus unseen R@1 per method and size.
- Fig. 3 (:func:`fig3`): measured cost of the cross-modal second moment, SOCM (Gram form) vs the
  full matrix.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import FLOOR, OURS, REFERENCE, Palette, interval_err, legend, n_text, panel_letters, subplots

__all__ = ["COLORS", "COST_FORMS", "fig1_table", "fig1", "fig2", "fig3"]

#: The methods' fixed colours (mdadd_noqueue: MDA-DD without its queue, an ablation).
COLORS = Palette("mdadd", {"mdadd_noqueue": "#E69F00", "random": FLOOR, "herding": "#0072B2", "covmatch": "#009E73",
                           "lors": "#CC79A7", "full": REFERENCE}, ours="mdadd")
#: Fig. 3's two forms of the second-moment term: colour and label (SOCM is ours).
COST_FORMS = {"socm": (OURS, "SOCM (Gram form)"), "naive": ("#0072B2", "full moment matrix")}


def fig1_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean, sd and number ``n`` of the units (distillation seed x unseen initialisation) of TR@1 and IR@1
    per method and size."""
    sel = tidy[(tidy["init"] == "unseen") & tidy["metric"].isin(["TR@1", "IR@1"])]
    return sel.groupby(["metric", "method", "n_pairs"])["value"].agg(["mean", "std", "count"]).reset_index() \
        .rename(columns={"count": "n"})


def fig1(table: pd.DataFrame) -> plt.Figure:
    """``table``: output of :func:`fig1_table` (columns metric, method, n_pairs, mean, std, n)."""
    fig, axes = subplots(1, 2, width="text", height=2.3, sharey=False)
    for ax, metric in zip(axes, ["TR@1", "IR@1"]):
        t = table[table["metric"] == metric]
        for method, g in t[t["method"] != "full"].groupby("method", sort=True):
            g = g.sort_values("n_pairs")
            # a recall lies in [0, 100]: the sd bar (a spread, not an interval of the mean) is cut there
            err = interval_err(g["mean"], (g["mean"] - g["std"]).clip(0, 100), (g["mean"] + g["std"]).clip(0, 100))
            ax.errorbar(g["n_pairs"], g["mean"], yerr=err, marker="o", color=COLORS(method), label=method)
        full = t[t["method"] == "full"]
        if len(full):
            ax.axhline(float(full["mean"].iloc[0]), color=COLORS("full"), ls="--", label="full data")
        ax.set_xscale("log")
        sizes = sorted(t.loc[t["method"] != "full", "n_pairs"].unique())
        ax.set_xticks(sizes, [str(s) for s in sizes])
        ax.minorticks_off()
        ax.set_xlabel("distilled pairs")
        ax.set_ylabel(f"{metric} (%)")
        ax.set_title(f"{metric}, unseen initialisations")
    panel_letters(axes)
    n = n_text(table.loc[table["method"] != "full", "n"])
    legend(fig, where="right", title=f"mean ± sd over\ndistillation seed\nx unseen init,\n{n}")
    return fig


def fig2(gap: pd.DataFrame) -> plt.Figure:
    """``gap``: columns method, n_pairs, seen, unseen, gap (from :func:`repro.papers.mdadd.experiment.init_gap`)."""
    fig, ax = subplots(width="column", height=2.6)
    methods = sorted(gap["method"].unique())
    sizes = sorted(gap["n_pairs"].unique())
    width = 0.8 / max(len(methods), 1)
    for j, method in enumerate(methods):
        g = gap[gap["method"] == method].set_index("n_pairs").reindex(sizes)
        ax.bar(np.arange(len(sizes)) + (j - (len(methods) - 1) / 2) * width, g["gap"], width,
               color=COLORS(method), label=method)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(np.arange(len(sizes)), [str(s) for s in sizes])
    ax.set_xlabel("distilled pairs")
    ax.set_ylabel("R@1 seen - unseen (points)")
    ax.grid(axis="x", visible=False)
    ax.set_title("Initialisation overfitting")
    legend(fig, where="below", ncol=3)
    return fig


def fig3(cost: pd.DataFrame) -> plt.Figure:
    """``cost``: columns dim, form (socm / naive), time_s, memory_bytes."""
    fig, axes = subplots(1, 2, width="text", height=2.3)
    for form, g in cost.groupby("form"):
        color, label = COST_FORMS.get(form, ("#888888", form))
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
    panel_letters(axes)
    legend(fig, where="right")
    return fig
