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

from repro.figures.style import Palette
from repro.papers.driftbench.harness import CONDITIONS

__all__ = ["COLORS", "fig1_table", "fig1", "fig2_table", "fig2", "table1"]

COLORS = Palette({"single_shot": "#999999", "multi_turn_neutral": "#0072B2", "multi_turn_pressure": "#D55E00",
                  "checkpointed_pressure": "#009E73"})
SHORT = {"single_shot": "single", "multi_turn_neutral": "neutral", "multi_turn_pressure": "pressure",
         "checkpointed_pressure": "checkpoint"}


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


def fig1(tidy: pd.DataFrame) -> plt.Figure:
    models = list(dict.fromkeys(tidy.model))
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.2))
    width = 0.8 / len(CONDITIONS)
    for ax, panel, label in ((axes[0], "adherence", "checker adherence (0-4)"),
                             (axes[1], "log_tokens", "log(1 + tokens), final reply")):
        for k, cond in enumerate(CONDITIONS):
            sub = tidy[(tidy.panel == panel) & (tidy.condition == cond)].set_index("model").reindex(models)
            ax.bar(np.arange(len(models)) + (k - 1.5) * width, sub.value.to_numpy(dtype=float), width,
                   color=COLORS(cond), label=SHORT[cond])
        ax.set_xticks(np.arange(len(models)), models, rotation=30, ha="right")
        ax.set_ylabel(label)
    axes[0].legend(frameon=False, fontsize=7)
    ax = axes[2]
    styles = ["-", "--", ":", "-."]
    rec = tidy[tidy.panel == "recall_by_turn"]
    for m, model in enumerate(models):
        for cond in CONDITIONS:
            sub = rec[(rec.model == model) & (rec.condition == cond)].sort_values("x")
            if len(sub):
                ax.plot(sub.x, sub.value, styles[m % len(styles)], color=COLORS(cond), marker="o", ms=3,
                        label=f"{model}, {SHORT[cond]}")
    ax.set_xlabel("turn of the probe")
    ax.set_ylabel("constraint recall")
    ax.set_ylim(0, 1.05)
    ax.legend(frameon=False, fontsize=6)
    fig.tight_layout()
    return fig


def fig2_table(table: pd.DataFrame) -> pd.DataFrame:
    """(model, condition, recall, judge_adherence, kbv) of the multi-turn conditions (single-shot has no probe)."""
    return table[table.condition != "single_shot"][["model", "condition", "recall", "judge_adherence", "kbv",
                                                    "kbv_lt4"]].reset_index(drop=True)


def fig2(tidy: pd.DataFrame) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    markers = ["o", "s", "^", "D", "v", "P"]
    for m, model in enumerate(dict.fromkeys(tidy.model)):
        for r in tidy[tidy.model == model].itertuples(index=False):
            size = 20 + 200 * (0 if np.isnan(r.kbv) else r.kbv)
            ax.scatter(r.judge_adherence, r.recall, s=size, marker=markers[m % len(markers)], color=COLORS(r.condition),
                       edgecolor="black", linewidth=0.4, label=f"{model}, {SHORT[r.condition]}")
    ax.axhline(0.8, color="grey", lw=0.6, ls="--")
    ax.axvline(3, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("judge adherence (0-4)")
    ax.set_ylabel("last-probe constraint recall")
    ax.set_xlim(-0.2, 4.2)
    ax.set_ylim(0, 1.05)
    ax.set_title("knows (above dashed) but violates (left of dotted); size = KBV", fontsize=7)
    ax.legend(frameon=False, fontsize=5, loc="lower left")
    fig.tight_layout()
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    cols = ["model", "condition", "runs", "kbv", "kbv_low", "kbv_high", "kbv_lt4", "kbv_lt4_low", "kbv_lt4_high",
            "kbv_checker", "kbv_checker_low", "kbv_checker_high", "recall", "judge_adherence", "adherence"]
    cols += [c for c in ("kbv_published", "kbv_published_diff") if c in table.columns]
    return table[cols]
