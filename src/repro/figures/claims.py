"""A claim's quantity in a figure, drawn with the interval its verdict is decided on.

A figure that draws what a claim compares draws the checker's own interval of it
(:func:`repro.claims.interval_rows`: the same unit, level, statistic, pairing, Bonferroni level and
resampling seed as the verdict), never one of its own, so that the figure and the artifact-evaluation
report show one interval. The aggregate of a paper writes the table (:func:`repro.claimtables.claim_table`,
:func:`repro.claimtables.same_rule_table`) beside its metrics; the figure reads it and draws each row with
:func:`draw_claims`.

- :func:`draw_claims`: each row's quantity at its slot with its interval (none where the checker forms
  none: the estimate alone), and the claimed relation (a threshold, the band of a ``within`` /
  ``outside`` claim, or the edge a non-inferiority claim's interval must clear where the row says which
  side is better); a quantity without an estimate is marked "n/a".
- :func:`relation_text` and :func:`no_interval_text`: the claimed relation and why no interval is drawn,
  for tick labels and axis labels; :func:`with_better`: the side each row's claim favours, which the table
  does not carry (a non-inferiority claim's edge depends on it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import REFERENCE, interval_err, mark_missing
from repro.stats.intervals import min_units

__all__ = ["draw_claims", "noninferior_edge", "with_better", "relation_text", "no_interval_text"]


def relation_text(row: Mapping[str, Any], *, short: bool = False) -> str:
    """The claimed relation of a row of :func:`repro.claimtables.claim_table`: "> 0", "within 0 ± 0.02", "beyond 0 ± 0.05",
    "non-inferior to 0, margin 5" (``short``, for a tick label: "in ±0.02", "beyond ±0.05" around 0, and
    "non-inferior,\nmargin 5" in two lines)."""
    op, threshold, tol = row["op"], float(row["threshold"]), float(row["tol"])
    if math.isnan(threshold):
        return ""
    around = f"±{tol:g}" if short and threshold == 0 else f"{threshold:g} ± {tol:g}"
    if op == "within":
        return f"{'in' if short else 'within'} {around}"
    if op == "outside":
        return f"beyond {around}"
    if op == "noninferior":
        if short:
            return f"non-inferior{'' if threshold == 0 else f' to {threshold:g}'},\nmargin {tol:g}"
        return f"non-inferior to {threshold:g}, margin {tol:g}"
    return f"{op} {threshold:g}"


def no_interval_text(rows: pd.DataFrame, unit: str) -> str:
    """Why rows of :func:`repro.claimtables.claim_table` are drawn without an interval ("no interval: 6 seeds\\nneeded at 95%",
    in two lines for an axis label, where too few units are the reason), or "" when every row has one."""
    none = rows[rows["low"].isna() & rows["estimate"].notna()]
    if none.empty:
        return ""
    level = float(none["level"].max())
    if (none["n"].fillna(0) < min_units(level)).all():
        return f"no interval: {min_units(level)} {unit}s\nneeded at {100 * level:.4g}%"
    return "no interval where\nthe checker forms none"


def with_better(rows: pd.DataFrame, claims: Sequence[Any]) -> pd.DataFrame:
    """``rows`` (of :func:`repro.claimtables.claim_table`) with ``better``: the side each row's claim favours
    (:attr:`repro.claims.Claim.better`, of ``claims``), so that :func:`draw_claims` dashes a non-inferiority
    claim at its margin's edge; empty for a row that is no claim's."""
    by_id = {c.id: c.better for c in claims}
    return rows.assign(better=[by_id.get(c, "") if isinstance(c, str) else "" for c in rows["claim"]])


def noninferior_edge(row: Mapping[str, Any]) -> float:
    """The line a non-inferiority claim's interval must lie beyond: ``threshold - tol`` where higher is better
    (PASS when the interval's lower end is above it), ``threshold + tol`` where lower is better; NaN where
    the row is no non-inferiority claim or does not say which side is better (a ``better`` column, from
    :attr:`repro.claims.Claim.better`: :func:`repro.claimtables.claim_table` does not carry it)."""
    better = row.get("better")
    if row["op"] != "noninferior" or better not in ("higher", "lower"):
        return math.nan
    threshold, tol = float(row["threshold"]), float(row["tol"])
    return threshold - tol if better == "higher" else threshold + tol


def draw_claims(ax: plt.Axes, rows: pd.DataFrame, x=None, *, colors: Sequence[str] | str = REFERENCE,
                filled: Sequence[bool] | None = None, half_width: float = 0.3) -> np.ndarray:
    """Draw each row of ``rows`` (:func:`repro.claimtables.claim_table` / :func:`repro.claimtables.same_rule_table`) at ``x`` (default 0, 1, ...):
    its ``estimate`` with the interval ``[low, high]`` its verdict is decided on (no bar where the bounds are
    missing), and the claimed relation beside it as a dashed line at ``threshold`` (with the grey band
    ``threshold ± tol`` of a ``within`` / ``outside`` claim; for a non-inferiority claim whose row says which
    side is better, at its edge, :func:`noninferior_edge`, with the grey band of the margin between it and
    ``threshold``), ``half_width`` either side of the slot. A row without an estimate is marked "n/a".
    ``filled``: per row, a filled marker (default: the rows that are a claim's) or an open one (the claim's
    rule on a quantity no claim reads). Returns the slots used.
    """
    x = np.arange(len(rows), dtype=float) if x is None else np.asarray(x, dtype=float)
    colors = [colors] * len(rows) if isinstance(colors, str) else list(colors)
    if filled is None:
        filled = [bool(c) for c in rows["claim"].fillna("")]
    for xi, colour, full, (_, r) in zip(x, colors, filled, rows.iterrows()):
        threshold, tol, edge = float(r["threshold"]), float(r["tol"]), noninferior_edge(r)
        if not math.isnan(threshold):
            if r["op"] in ("within", "outside") and not math.isnan(tol):
                ax.add_patch(plt.Rectangle((xi - half_width, threshold - tol), 2 * half_width, 2 * tol,
                                           facecolor="0.88", edgecolor="none", zorder=0.8))
            if not math.isnan(edge):  # the margin, between the edge to clear and the threshold
                ax.add_patch(plt.Rectangle((xi - half_width, min(edge, threshold)), 2 * half_width, tol,
                                           facecolor="0.88", edgecolor="none", zorder=0.8))
            ax.hlines(threshold if math.isnan(edge) else edge, xi - half_width, xi + half_width, colors=REFERENCE,
                      linestyles="--", lw=0.8, zorder=1.5)
        estimate = float(r["estimate"])
        if math.isnan(estimate):
            mark_missing(ax, [xi], threshold if not math.isnan(threshold) else 0.0)
            continue
        ax.errorbar([xi], [estimate], yerr=interval_err([estimate], [r["low"]], [r["high"]]), fmt="o", ms=4,
                    color=colour, mfc=colour if full else "white", capsize=2, zorder=3)
    ax.grid(axis="x", visible=False)
    if len(x):
        ax.set_xlim(x.min() - 0.6, x.max() + 0.6)
    return x
