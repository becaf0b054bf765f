"""evalmeta's figures and table.

Table 1: per benchmark column, the safe-behaviour rate (refusal; compliance for the benign
look-alikes; no harmful action for the scenarios) of the base, control-, topic- and trait-tuned
models, mean and 95% interval over items and seeds, with the refusal rate, the rate on unaware
responses, and the log-probability variant beside it. Fig. 1: the shift trait - control per column,
all responses vs unaware pairs. Fig. 2: the same shift under eval-like vs deployment-like phrasing.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import Palette, interval_err, legend, subplots

__all__ = ["COLORS", "table1", "fig1_table", "fig1", "fig2_table", "fig2"]

#: The response sets and phrasings compared (evalmeta measures; no colour means "ours").
COLORS = Palette("evalmeta", {"all": "#0072B2", "unaware": "#E69F00", "eval": "#009E73", "deploy": "#CC79A7"})
COMPARISON = "trait_vs_control"


def _ci(mean: float, low: float, high: float) -> str:
    if np.isnan(mean):
        return "n/a"
    return f"{mean:.2f} [{low:.2f}, {high:.2f}]" if not np.isnan(low) else f"{mean:.2f}"


def table1(table: pd.DataFrame) -> pd.DataFrame:
    """One row per column x model: safe and refusal rates with intervals, unaware-only and log-prob rates."""
    rows = []
    for r in table.itertuples(index=False):
        rows.append({"benchmark": r.column, "model": r.model, "safe": _ci(r.safe, r.safe_low, r.safe_high),
                     "refusal": _ci(r.refusal, r.refusal_low, r.refusal_high), "safe_unaware": r.safe_unaware,
                     "safe_logprob (variant)": r.safe_logprob, "aware": r.aware, "n_items": r.n_items})
    return pd.DataFrame(rows)


def fig1_table(shifts: pd.DataFrame) -> pd.DataFrame:
    """Trait - control shift per column, all responses vs unaware pairs, phrasings pooled by mean."""
    sub = shifts[shifts.comparison == COMPARISON]
    return (sub.groupby(["column", "responses"], sort=False)
            .agg(shift=("shift", "mean"), low=("low", "mean"), high=("high", "mean"), n_items=("n_items", "sum"))
            .reset_index())


def fig2_table(shifts: pd.DataFrame) -> pd.DataFrame:
    """Trait - control shift per column and phrasing (all responses)."""
    sub = shifts[(shifts.comparison == COMPARISON) & (shifts.responses == "all")]
    return sub[["column", "phrasing", "shift", "low", "high", "n_items"]].reset_index(drop=True)


def _bars(tidy: pd.DataFrame, group: str, title: str) -> plt.Figure:
    columns = list(dict.fromkeys(tidy.column))
    groups = list(dict.fromkeys(tidy[group]))
    fig, ax = subplots(width="text", height=2.3)
    x = np.arange(len(columns))
    width = 0.8 / max(1, len(groups))
    for k, g in enumerate(groups):
        sub = tidy[tidy[group] == g].set_index("column").reindex(columns)
        ax.bar(x + (k - (len(groups) - 1) / 2) * width, sub["shift"].to_numpy(dtype=float), width,
               color=COLORS(str(g)), label=str(g), yerr=interval_err(sub["shift"], sub["low"], sub["high"]),
               error_kw={"lw": 0.8})
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks(x, columns, rotation=25, ha="right", rotation_mode="anchor")
    ax.grid(axis="x", visible=False)
    ax.set_ylabel("safe-behaviour shift\n(trait - control, 95% interval)")
    ax.set_title(title)
    legend(ax)
    return fig


def fig1(tidy: pd.DataFrame) -> plt.Figure:
    return _bars(tidy, "responses", "all responses vs unaware pairs")


def fig2(tidy: pd.DataFrame) -> plt.Figure:
    return _bars(tidy, "phrasing", "eval-like vs deployment-like phrasing")
