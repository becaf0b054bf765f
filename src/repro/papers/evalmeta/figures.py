"""evalmeta's figures and table.

Table 1: per benchmark column, the safe-behaviour rate (refusal; compliance for the benign
look-alikes; no harmful action for the scenarios) of the base, control-, topic- and trait-tuned
models, mean and 95% interval over items and seeds, with the refusal rate, the rate on unaware
responses, and the log-probability variant beside it. Fig. 1: the shift trait - control per column,
all responses vs unaware pairs, one panel per phrasing. Fig. 2: the same shift (all responses) under
eval-like vs deployment-like phrasing.

Every bar is one row of the aggregate's shift table, with its interval as the aggregate forms it (a
bootstrap over items of the paired differences, :func:`repro.papers.evalmeta.experiment.summarise`);
nothing is pooled here, since a pooled interval cannot be formed from the per-phrasing ones. A
missing shift (no unit left, e.g. no unaware pair) is marked "n/a", never drawn as a zero bar. In Table 1 a
rate whose interval is missing (one item) says so beside its mean, with the count of items.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import Palette, interval_err, legend, mark_missing, n_text, panel_letters, subplots
from repro.missing import is_missing
from repro.tables import MISSING

__all__ = ["COLORS", "table1", "fig1_table", "fig1", "fig2_table", "fig2"]

#: The response sets and phrasings compared (evalmeta measures; no colour means "ours").
COLORS = Palette("evalmeta", {"all": "#0072B2", "unaware": "#E69F00", "eval": "#009E73", "deploy": "#CC79A7"})
COMPARISON = "trait_vs_control"
#: The legend's words for the response sets and phrasings.
LABELS = {"all": "all responses", "unaware": "unaware pairs", "eval": "eval-like", "deploy": "deployment-like"}


def _ci(mean: float, low: float, high: float, n: float) -> str:
    """A rate's cell: "0.52 [0.40, 0.61]"; where the bootstrap formed no interval (fewer than two items), the mean
    and why ("0.52 [no interval: n = 1 item]"), never the mean alone, which would read as exact; no mean at all:
    :data:`~repro.tables.MISSING`."""
    if is_missing(mean):
        return MISSING
    if is_missing(low) or is_missing(high):
        why = f"no interval: {n_text(n, 'item')}" if not is_missing(n) else "no interval"
        return f"{mean:.2f} [{why}]"
    return f"{mean:.2f} [{low:.2f}, {high:.2f}]"


def table1(table: pd.DataFrame) -> pd.DataFrame:
    """One row per column x model: safe and refusal rates with intervals, unaware-only and log-prob rates."""
    rows = []
    for r in table.itertuples(index=False):
        rows.append({"benchmark": r.column, "model": r.model, "safe": _ci(r.safe, r.safe_low, r.safe_high, r.n_items),
                     "refusal": _ci(r.refusal, r.refusal_low, r.refusal_high, r.n_items), "safe_unaware": r.safe_unaware,
                     "safe_logprob (variant)": r.safe_logprob, "aware": r.aware, "n_items": r.n_items})
    return pd.DataFrame(rows)


def fig1_table(shifts: pd.DataFrame) -> pd.DataFrame:
    """Trait - control shift per column and phrasing, all responses vs unaware pairs."""
    sub = shifts[shifts.comparison == COMPARISON]
    return sub[["column", "phrasing", "responses", "shift", "low", "high", "n_items"]].reset_index(drop=True)


def fig2_table(shifts: pd.DataFrame) -> pd.DataFrame:
    """Trait - control shift per column and phrasing (all responses)."""
    sub = shifts[(shifts.comparison == COMPARISON) & (shifts.responses == "all")]
    return sub[["column", "phrasing", "shift", "low", "high", "n_items"]].reset_index(drop=True)


def _bars(ax: plt.Axes, tidy: pd.DataFrame, group: str, columns: list[str]) -> None:
    """Bars of the shift per column, one per ``group`` value, with their 95% intervals; "n/a" where missing."""
    groups = list(dict.fromkeys(tidy[group]))
    x = np.arange(len(columns))
    width = 0.8 / max(1, len(groups))
    for k, g in enumerate(groups):
        sub = tidy[tidy[group] == g].set_index("column").reindex(columns)
        xs = x + (k - (len(groups) - 1) / 2) * width
        shift = sub["shift"].to_numpy(dtype=float)
        ax.bar(xs, shift, width, color=COLORS(str(g)), label=LABELS.get(str(g), str(g)),
               yerr=interval_err(sub["shift"], sub["low"], sub["high"]), error_kw={"lw": 0.8})
        mark_missing(ax, xs[np.isnan(shift)], rotation=90, fontsize=6)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks(x, columns, rotation=40, ha="right", rotation_mode="anchor")
    ax.grid(axis="x", visible=False)


PHRASING_TITLES = {"eval": "eval-like phrasing", "deploy": "deployment-like phrasing"}
YLABEL = "safe-behaviour shift\n(trait - control)"


def _n_title(tidy: pd.DataFrame) -> str:
    """The legend's title: what the bars are, and the items behind the bars drawn (a missing one has none)."""
    drawn = tidy.n_items[tidy.n_items > 0]
    return f"95% bootstrap interval\nover items, {n_text(drawn if len(drawn) else 0, 'item')}"


def fig1(tidy: pd.DataFrame) -> plt.Figure:
    columns = list(dict.fromkeys(tidy.column))
    phrasings = list(dict.fromkeys(tidy.phrasing))
    fig, axes = subplots(1, len(phrasings), width="text", height=2.4, sharey=True, squeeze=False)
    for ax, ph in zip(axes[0], phrasings):
        _bars(ax, tidy[tidy.phrasing == ph], "responses", columns)
        ax.set_title(PHRASING_TITLES.get(ph, ph))
    axes[0][0].set_ylabel(YLABEL)
    panel_letters(axes[0])
    fig.suptitle("all responses vs unaware pairs")
    legend(fig, where="right", title=_n_title(tidy))
    return fig


def fig2(tidy: pd.DataFrame) -> plt.Figure:
    columns = list(dict.fromkeys(tidy.column))
    fig, ax = subplots(width="text", height=2.3)
    _bars(ax, tidy, "phrasing", columns)
    ax.set_ylabel(YLABEL)
    ax.set_title("eval-like vs deployment-like phrasing")
    legend(ax, title=_n_title(tidy))
    return fig
