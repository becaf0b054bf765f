"""toolgap's figures and table.

Fig. 1: mismatch rate per model and task, stacked into missed calls (necessary, not called) and
over-calls (unnecessary, called). Fig. 2: test accuracy of the cognition and action probes at the
last prompt token by relative depth, and the cosine between their directions. Table 1: the mismatch
decomposition into cognition errors and cognition-to-action errors.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import Palette

__all__ = ["COLORS", "fig1_table", "fig1", "fig2", "table1"]

COLORS = Palette({"missed_call": "#D55E00", "over_call": "#0072B2", "cognition": "#009E73", "action": "#CC79A7"})


def fig1_table(table: pd.DataFrame) -> pd.DataFrame:
    """Tidy rows (model, task, direction, rate)."""
    rows = []
    for r in table.itertuples(index=False):
        for direction in ("missed_call", "over_call"):
            rows.append({"model": r.model, "task": r.task, "direction": direction, "rate": getattr(r, direction) / r.n,
                         "n": r.n})
    return pd.DataFrame(rows)


def fig1(tidy: pd.DataFrame) -> plt.Figure:
    tasks = list(dict.fromkeys(tidy.task))
    models = list(dict.fromkeys(tidy.model))
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.4 * len(tasks), 3.0), sharey=True, squeeze=False)
    x = np.arange(len(models))
    for ax, task in zip(axes[0], tasks):
        bottom = np.zeros(len(models))
        for direction, label in (("missed_call", "necessary, not called"), ("over_call", "unnecessary, called")):
            sub = tidy[(tidy.task == task) & (tidy.direction == direction)].set_index("model").reindex(models)
            vals = sub.rate.fillna(0).to_numpy()
            ax.bar(x, vals, bottom=bottom, color=COLORS(direction), label=label, width=0.7)
            bottom += vals
        ax.set_xticks(x, models, rotation=30, ha="right")
        ax.set_title(task)
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("mismatch rate")
    axes[0][-1].legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


def fig2(layers: pd.DataFrame) -> plt.Figure:
    """Rows: tasks; columns: probe accuracy (cognition solid, action dashed), cosine; one line per model."""
    tasks = list(dict.fromkeys(layers.task))
    models = list(dict.fromkeys(layers.model))
    fig, axes = plt.subplots(len(tasks), 2, figsize=(7.0, 2.6 * len(tasks)), sharex=True, squeeze=False)
    for row, task in zip(axes, tasks):
        for model in models:
            sub = layers[(layers.task == task) & (layers.model == model)].sort_values("depth")
            color = COLORS(model)
            row[0].plot(sub.depth, sub.cognition_accuracy, "-o", ms=2.5, color=color, label=f"{model} cognition")
            row[0].plot(sub.depth, sub.action_accuracy, "--s", ms=2.5, color=color, label=f"{model} action")
            row[1].plot(sub.depth, sub.cosine, "-o", ms=2.5, color=color, label=model)
        row[0].set_ylabel(f"{task}\nprobe test accuracy")
        row[0].set_ylim(0, 1.02)
        row[1].axhline(0, color="0.6", lw=0.8)
        row[1].set_ylabel("cosine(cognition, action)")
        row[1].set_ylim(-1, 1)
    for ax in axes[-1]:
        ax.set_xlabel("relative depth (layer / layers)")
    axes[0][0].legend(frameon=False, fontsize=5.5, ncol=2)
    axes[0][1].legend(frameon=False, fontsize=6)
    fig.tight_layout()
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    """Per model and task: items, mismatch rate and its directions, and the decomposition."""
    out = table[["model", "task", "n", "necessary", "called", "mismatch_rate", "missed_call", "over_call",
                 "cognition_to_action", "cognition", "undecided", "c2a_share", "probe_cross_fit"]].copy()
    return out.rename(columns={"c2a_share": "cognition_to_action_share"})
