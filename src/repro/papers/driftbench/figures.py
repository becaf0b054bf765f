"""driftbench's figures and table.

Fig. 1: checker adherence and complexity (log1p tokens of the final reply) per condition and model
(final state), and probe recall by turn per condition. Fig. 2: mean recall against mean
judge adherence per model and condition (the dissociation), marker size = KBV rate. Table 1: KBV
rate per model and condition with Wilson intervals (judge adherence < 3, < 4, and the checker's < 3).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from repro.figures.style import FLOOR, Palette, legend, n_text, panel_letters, subplots
from repro.papers.driftbench.harness import CONDITIONS

__all__ = ["COLORS", "fig1_table", "fig1", "fig2_table", "fig2", "table1"]

#: The conditions a model is run under (driftbench compares conditions, not methods: no colour means "ours").
COLORS = Palette("driftbench", {"single_shot": FLOOR, "multi_turn_neutral": "#0072B2",
                                "multi_turn_pressure": "#E69F00", "checkpointed_pressure": "#009E73"})
SHORT = {"single_shot": "single", "multi_turn_neutral": "neutral", "multi_turn_pressure": "pressure",
         "checkpointed_pressure": "checkpoint"}
#: Models are told apart by line style (Fig. 1) and marker (Fig. 2), in the order they appear.
STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]


def fig1_table(runs: pd.DataFrame, recall: pd.DataFrame) -> pd.DataFrame:
    """Tidy rows (panel, model, condition, x, value, n)."""
    rows = []
    for (model, cond), d in runs.groupby(["model", "condition"], sort=False):
        for panel, col in (("adherence", "adherence"), ("log_tokens", "log_tokens")):
            v = d[col].dropna()
            rows.append({"panel": panel, "model": model, "condition": cond, "x": 0, "value": v.mean(), "n": len(v)})
    for (model, cond, turn), d in recall.groupby(["model", "condition", "turn"], sort=True):
        rows.append({"panel": "recall_by_turn", "model": model, "condition": cond, "x": int(turn),
                     "value": d.recall.mean(), "n": len(d)})
    return pd.DataFrame(rows)


def _condition_handles(conditions) -> tuple[list, list[str]]:
    conditions = list(conditions)
    return [Patch(color=COLORS(c)) for c in conditions], [SHORT[c] for c in conditions]


def fig1(tidy: pd.DataFrame) -> plt.Figure:
    models = list(dict.fromkeys(tidy.model))
    fig, axes = subplots(1, 3, width="text", height=2.4)
    width = 0.8 / len(CONDITIONS)
    for ax, panel, label in ((axes[0], "adherence", "checker adherence (0-4)"),
                             (axes[1], "log_tokens", "log(1 + tokens), final reply")):
        for k, cond in enumerate(CONDITIONS):
            sub = tidy[(tidy.panel == panel) & (tidy.condition == cond)].set_index("model").reindex(models)
            ax.bar(np.arange(len(models)) + (k - (len(CONDITIONS) - 1) / 2) * width, sub.value.to_numpy(dtype=float),
                   width, color=COLORS(cond))
        ax.set_xticks(np.arange(len(models)), models, rotation=30, ha="right", rotation_mode="anchor")
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(label)
    ax = axes[2]
    rec = tidy[tidy.panel == "recall_by_turn"]
    for m, model in enumerate(models):
        for cond in CONDITIONS:
            sub = rec[(rec.model == model) & (rec.condition == cond)].sort_values("x")
            if len(sub):
                ax.plot(sub.x, sub.value, STYLES[m % len(STYLES)], color=COLORS(cond), marker="o", ms=3)
    ax.set_xlabel("turn of the probe")
    ax.set_ylabel("constraint recall")
    ax.set_ylim(0, 1.05)
    panel_letters(axes)
    handles, labels = _condition_handles(CONDITIONS)
    handles += [Line2D([], [], color="0.3", ls=STYLES[m % len(STYLES)]) for m in range(len(models))]
    labels += [f"{model} (recall)" for model in models]
    bars = tidy[tidy.panel != "recall_by_turn"].n
    title = f"means over runs: {n_text(bars, 'run')} per bar"
    if len(rec):
        title += f", {n_text(rec.n, 'run')} per recall point"
    legend(fig, where="below", handles=handles, labels=labels, ncol=4, title=title)
    return fig


def fig2_table(table: pd.DataFrame) -> pd.DataFrame:
    """(model, condition, recall, judge_adherence, kbv, runs) of the multi-turn conditions (single-shot has no
    probe); ``runs``: how many runs each point's means are over."""
    return table[table.condition != "single_shot"][["model", "condition", "recall", "judge_adherence", "kbv",
                                                    "kbv_lt4", "runs"]].reset_index(drop=True)


def fig2(tidy: pd.DataFrame) -> plt.Figure:
    models = list(dict.fromkeys(tidy.model))
    fig, ax = subplots(width="text", height=2.6)
    for m, model in enumerate(models):
        for r in tidy[tidy.model == model].itertuples(index=False):
            size = 20 + 200 * (0 if np.isnan(r.kbv) else r.kbv)
            ax.scatter(r.judge_adherence, r.recall, s=size, marker=MARKERS[m % len(MARKERS)],
                       color=COLORS(r.condition), edgecolor="black", linewidth=0.4)
    ax.axhline(0.8, color="grey", lw=0.6, ls="--")
    ax.axvline(3, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("judge adherence (0-4)")
    ax.set_ylabel("last-probe constraint recall")
    ax.set_xlim(-0.2, 4.2)
    ax.set_ylim(0, 1.05)
    ax.set_title("knows (above dashed) but violates (left of dotted); marker size = KBV rate")
    handles, labels = _condition_handles(c for c in CONDITIONS if c in set(tidy.condition))
    handles += [Line2D([], [], ls="none", marker=MARKERS[m % len(MARKERS)], color="0.5", markeredgecolor="black",
                       markeredgewidth=0.4) for m in range(len(models))]
    labels += models
    legend(ax, handles=handles, labels=labels, title=f"means over runs,\n{n_text(tidy.runs, 'run')} per point")
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    cols = ["model", "condition", "runs", "kbv", "kbv_low", "kbv_high", "kbv_lt4", "kbv_lt4_low", "kbv_lt4_high",
            "kbv_checker", "kbv_checker_low", "kbv_checker_high", "recall", "judge_adherence", "adherence"]
    cols += [c for c in ("kbv_published", "kbv_published_diff") if c in table.columns]
    return table[cols]
