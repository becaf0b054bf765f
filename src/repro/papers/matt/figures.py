"""matt's fig1 (recovery vs training budget per method, and the claims on that variant with the intervals
their verdicts are decided on, drawn by :func:`repro.figures.claims.draw_claims` from the aggregate's
:func:`repro.papers.matt.experiment.comparisons`), table1 (recovery at fixed budgets, the token-budget variant)
and table2 (the paper's comparison at equal CPU time)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.claims import draw_claims, no_interval_text, relation_text
from repro.figures.style import FLOOR, Palette, legend, n_text, not_built, panel_letters, subplots

__all__ = ["COLORS", "fig1_table", "fig1", "table1", "table2"]

#: matt (ours) and the embedding initialisations it is compared with.
COLORS = Palette("matt", {"mean": FLOOR, "fvt": "#0072B2", "focus": "#009E73"}, ours="matt")
ORDER = ("matt", "fvt", "focus", "mean")
LABELS = {"mc": "multiple choice", "gen": "completion", "bpc": "bits per character"}
#: The unit of a task's score, for the difference the claims compare.
SCORE_UNITS = {"mc": "accuracy", "gen": "accuracy", "bpc": "bits per character"}
TASKS = ("mc", "gen", "bpc")


def fig1_table(recovery: pd.DataFrame, comparisons: pd.DataFrame) -> pd.DataFrame:
    """Fig. 1's table: the recovery rows (``quantity`` ``recovery``: one per method and budget, the
    aggregate's recovery table as it is) and the claims' rows (``quantity`` ``claim``: each compared
    quantity with the interval its verdict is decided on, from
    :func:`repro.papers.matt.experiment.comparisons`)."""
    parts = [recovery.assign(quantity="recovery")]
    if len(comparisons):
        parts.append(comparisons.assign(quantity="claim"))
    out = pd.concat(parts, ignore_index=True)
    return out[["quantity", *[c for c in out.columns if c != "quantity"]]]


def fig1(table: pd.DataFrame) -> plt.Figure:
    """Top row: recovery per task against the target-language tokens trained on, one line per method.
    Bottom row: beneath its task, each claim on this variant, its compared quantity (a mean paired
    difference over items) with the interval its verdict is decided on and the claimed relation (its
    threshold dashed, in the comparator's colour; :func:`repro.figures.claims.draw_claims`).

    A task the source model never gets right has no recovery (NaN in the table): its panel says so; a
    task no claim reads says that too.
    """
    fig, axes = subplots(2, 3, width="text", height=3.9,
                         gridspec_kw={"height_ratios": [1.25, 1], "width_ratios": [1, 1, 1.25]})
    top, bottom = axes
    curves = table[table["quantity"] == "recovery"] if "quantity" in table else table
    claims = table[table["quantity"] == "claim"] if "quantity" in table else table.iloc[:0]
    methods = [m for m in ORDER if m in set(curves.method)] + sorted(set(curves.method) - set(ORDER))
    for ax, task in zip(top, TASKS):
        ax.set_title(LABELS[task])
        column = curves[f"recovery_{task}"]
        if column.isna().all():
            not_built(ax, "recovery is undefined: the source model scores 0 on this task")
            continue
        for method in methods:
            sub = curves[curves.method == method]
            ax.plot(
                sub.tokens,
                sub[f"recovery_{task}"],
                marker="o",
                label=method,
                color=COLORS(method),
                zorder=3 if method in COLORS.ours else 2,
            )
        ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
        ax.set_xlabel("training budget\n(target tokens)")
    top[0].set_ylabel("recovery (fraction of source)")
    for bx, task in zip(bottom, TASKS):
        sub = claims[claims["task"] == task].reset_index(drop=True) if len(claims) else claims
        if not len(sub):
            not_built(bx, "no claim reads this task in the token-budget variant")
            continue
        draw_claims(bx, sub, colors=[COLORS(c) for c in sub["comparator"]])
        bx.set_xticks(np.arange(len(sub)), [r["label"].replace(" gain", "\ngain") +
                                            f"\n({relation_text(r, short=True)})" for _, r in sub.iterrows()])
        bx.set_ylabel(f"paired difference\n({SCORE_UNITS[task]})")
        counts = sub["n"].dropna()
        bx.set_title(f"claims,\n{n_text(counts, 'item')}" if len(counts) else "claims")
        why = no_interval_text(sub, "item")
        if why:
            bx.set_xlabel(why)
    panel_letters(axes.flat)
    legend(fig, where="right")
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    cols = ["method", "budget_tokens", "tokens", "cpu_s", "recovery_mc", "recovery_gen", "recovery_bpc", "bpc"]
    return table[cols].reset_index(drop=True)


def table2(table: pd.DataFrame) -> pd.DataFrame:
    """One row per arm of the paper's comparison: steps, tokens and training CPU-seconds, then recovery."""
    cols = ["arm", "steps", "tokens", "train_cpu_s", "recovery_mc", "recovery_gen", "recovery_bpc", "bpc"]
    return table[cols].reset_index(drop=True)
