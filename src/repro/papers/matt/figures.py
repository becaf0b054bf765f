"""matt's fig1 (recovery vs training budget per method), table1 (recovery at fixed budgets, the token-budget
variant) and table2 (the paper's comparison at equal CPU time)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import FLOOR, Palette, legend, not_built, panel_letters, subplots

__all__ = ["COLORS", "fig1", "table1", "table2"]

#: matt (ours) and the embedding initialisations it is compared with.
COLORS = Palette("matt", {"mean": FLOOR, "fvt": "#0072B2", "focus": "#009E73"}, ours="matt")
ORDER = ("matt", "fvt", "focus", "mean")
LABELS = {"mc": "multiple choice", "gen": "completion", "bpc": "bits per character"}


def fig1(table: pd.DataFrame) -> plt.Figure:
    """Recovery per task against the target-language tokens trained on, one line per method.

    A task the source model never gets right has no recovery (NaN in the table): its panel says so.
    """
    fig, axes = subplots(1, 3, width="text", height=2.2, sharex=True)
    methods = [m for m in ORDER if m in set(table.method)] + sorted(set(table.method) - set(ORDER))
    for ax, task in zip(axes, ("mc", "gen", "bpc")):
        ax.set_title(LABELS[task])
        column = table[f"recovery_{task}"]
        if column.isna().all():
            not_built(ax, "recovery is undefined: the source model scores 0 on this task")
            continue
        for method in methods:
            sub = table[table.method == method]
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
    axes[0].set_ylabel("recovery (fraction of source)")
    panel_letters(axes)
    legend(fig, where="right")
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    cols = ["method", "budget_tokens", "tokens", "cpu_s", "recovery_mc", "recovery_gen", "recovery_bpc", "bpc"]
    return table[cols].reset_index(drop=True)


def table2(table: pd.DataFrame) -> pd.DataFrame:
    """One row per arm of the paper's comparison: steps, tokens and training CPU-seconds, then recovery."""
    cols = ["arm", "steps", "tokens", "train_cpu_s", "recovery_mc", "recovery_gen", "recovery_bpc", "bpc"]
    return table[cols].reset_index(drop=True)
