"""toolgap's figures and table.

Fig. 1: mismatch rate per model and task, stacked into missed calls (necessary, not called) and
over-calls (unnecessary, called), the total with the interval its claim is decided on
(:data:`repro.papers.toolgap.experiment.MISMATCH_CLAIM`) and the claim's threshold. Fig. 2: test accuracy of the cognition and action probes at the
last prompt token by relative depth, and the cosine between their directions. Table 1: the mismatch
decomposition into cognition errors and cognition-to-action errors.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from repro.figures.style import (REFERENCE, Palette, categorical, interval_err, legend, mark_missing, n_text, not_built,
                                 panel_letters, subplots)

__all__ = ["COLORS", "fig1_table", "fig1", "fig2", "table1"]

#: The two directions of a mismatch and the two probes (toolgap measures models; no colour means "ours").
#: Models are told apart by :func:`repro.figures.style.categorical` colours, in the order they appear.
COLORS = Palette("toolgap", {"missed_call": "#E69F00", "over_call": "#0072B2", "cognition": "#009E73",
                             "action": "#CC79A7"})
PROBE_STYLES = {"cognition": ("-", "o"), "action": ("--", "s")}


#: Fig. 1's table: one row per drawn element; the claim's columns are NaN on the stacked parts.
FIG1_COLUMNS = ["model", "task", "direction", "rate", "n", "low", "high", "level", "threshold", "interval", "claim",
                "status"]


def fig1_table(table: pd.DataFrame) -> pd.DataFrame:
    """Tidy rows (model, task, direction, rate, n, ...) from the aggregate's per-(model, task) table.

    ``direction`` ``missed_call`` and ``over_call``: the two parts of the stack (not a claim's
    quantity, no interval). ``mismatch``: their total, the rate the mismatch claim judges, with the
    interval its verdict is decided on, at its ``level``, its ``threshold`` and kind (``interval``)
    and the setting's verdict, from the table's ``claim_*`` columns.
    """
    rows = []
    for r in table.to_dict("records"):
        for direction in ("missed_call", "over_call"):
            rows.append({"model": r["model"], "task": r["task"], "direction": direction, "rate": r[direction] / r["n"],
                         "n": r["n"]})
        rows.append({"model": r["model"], "task": r["task"], "direction": "mismatch", "rate": r["mismatch_rate"],
                     "n": r["n"], **{k: r.get(f"claim_{k}") for k in ("low", "high", "level", "threshold", "interval",
                                                                             "status")}, "claim": r.get("claim")})
    return pd.DataFrame(rows, columns=FIG1_COLUMNS)


def fig1(tidy: pd.DataFrame) -> plt.Figure:
    """Stacked bars per model and task, the total's claim interval and the claim's threshold; a missing
    rate is left out (no bar, "n/a" in its place), never drawn as 0."""
    tasks = list(dict.fromkeys(tidy.task))
    models = list(dict.fromkeys(tidy.model))
    fig, axes = subplots(1, len(tasks), width="text", height=2.3, sharey=True, squeeze=False)
    x = np.arange(len(models))
    for ax, task in zip(axes[0], tasks):
        bottom = np.zeros(len(models))
        for direction, label in (("missed_call", "necessary, not called"), ("over_call", "unnecessary, called")):
            sub = tidy[(tidy.task == task) & (tidy.direction == direction)].set_index("model").reindex(models)
            vals = sub.rate.to_numpy(dtype=float)
            ax.bar(x, vals, bottom=bottom, color=COLORS(direction), label=label, width=0.7)
            bottom = bottom + vals
        total = tidy[(tidy.task == task) & (tidy.direction == "mismatch")].set_index("model").reindex(models)
        if total.rate.notna().any():  # NaN bounds (no interval) draw no bar
            ax.errorbar(x, total.rate, yerr=interval_err(total.rate, total.low, total.high), fmt="none",
                        ecolor=REFERENCE, elinewidth=0.8, capsize=2, label="claim's interval")
        for threshold in total.threshold.dropna().unique():
            ax.axhline(threshold, color=REFERENCE, ls="--", lw=0.8, label=f"claim's threshold ({threshold:g})")
        mark_missing(ax, x[np.isnan(bottom)], 0.02)  # an empty slot would read as a rate of 0
        ax.set_xlim(-0.5, len(models) - 0.5)  # every model's slot, with a bar or not
        ax.set_xticks(x, models, rotation=30, ha="right", rotation_mode="anchor")
        ax.grid(axis="x", visible=False)
        counts = tidy[tidy.task == task].n.dropna()
        ax.set_title(f"{task} ({n_text(counts, 'item')})" if len(counts) else task)
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("mismatch rate")
    panel_letters(axes[0])
    legend(fig, where="right")
    return fig


def fig2(layers: pd.DataFrame) -> plt.Figure:
    """Rows: tasks; columns: probe accuracy (cognition solid, action dashed), cosine; one colour per model.

    A probe whose labels are all equal is not trained (its accuracy and cosine are NaN): a panel with
    no trained probe for any model says so.
    """
    tasks = list(dict.fromkeys(layers.task))
    models = list(dict.fromkeys(layers.model))
    colours = categorical(models)
    fig, axes = subplots(len(tasks), 2, width="text", height=0.6 + 1.8 * len(tasks), sharex=True, squeeze=False)
    for row, task in zip(axes, tasks):
        part = layers[layers.task == task]
        for model in models:
            sub = part[part.model == model].sort_values("depth")
            for probe, (ls, marker) in PROBE_STYLES.items():
                row[0].plot(sub.depth, sub[f"{probe}_accuracy"], ls=ls, marker=marker, ms=2.5, color=colours[model])
            row[1].plot(sub.depth, sub.cosine, "-o", ms=2.5, color=colours[model])
        row[0].set_ylabel(f"{task}\nprobe test accuracy")
        row[0].set_ylim(0, 1.02)
        row[1].axhline(0, color="0.6", lw=0.8)
        row[1].set_ylabel("cosine(cognition, action)")
        row[1].set_ylim(-1, 1)
        if part[["cognition_accuracy", "action_accuracy"]].isna().all().all():
            not_built(row[0], "no probe trained (every item has the same label)")
        if part.cosine.isna().all():
            not_built(row[1], "no cosine: no model has both probes trained (one of them saw a single label)")
    for ax in axes[-1]:
        ax.set_xlabel("relative depth (layer / layers)")
    panel_letters(axes.flat)
    handles = [Line2D([], [], color=colours[m]) for m in models]
    handles += [Line2D([], [], color="0.3", ls=ls, marker=marker, ms=2.5) for ls, marker in PROBE_STYLES.values()]
    legend(fig, where="below", handles=handles, labels=[*models, *(f"{p} probe" for p in PROBE_STYLES)], ncol=5)
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    """Per model and task: items, mismatch rate and its directions, and the decomposition."""
    out = table[["model", "task", "n", "necessary", "called", "mismatch_rate", "missed_call", "over_call",
                 "cognition_to_action", "cognition", "undecided", "c2a_share", "probe_cross_fit"]].copy()
    return out.rename(columns={"c2a_share": "cognition_to_action_share"})
