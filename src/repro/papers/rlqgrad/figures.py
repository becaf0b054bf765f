"""The figures of RLQ-Grad ("Modeling quantum neural network gradient with reinforcement learning").

One builder per figure, each taking the tidy table it plots (the CSV written beside the PDF):

- :func:`fig1`: (a) the barren-plateau curve, variance of the (surrogate) gradient against n, and
  (b) each method's slope of log10 variance per qubit with the interval its claim is decided on,
  from ``results/rlqgrad/variance.csv``
  (:func:`repro.papers.rlqgrad.experiment.variance_table`: one row per point drawn).
- :func:`fig2`: CPU time and peak allocated memory of one update against n, per method, from the
  long table :func:`fig2_table` makes of ``results/rlqgrad/cost.csv`` (n_qubits, method, quantity,
  value), with RLQ-Grad's proposal alone as a series of its own.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from repro.figures.style import (FLOOR, REFERENCE, Palette, interval_err, legend, n_text, not_built, panel_letters,
                                 subplots)
from repro.stats.intervals import min_units

__all__ = ["COLORS", "fig1", "fig2_table", "fig2"]

#: The fixed colour of each training method (RLQ-Grad's proposal alone shares RLQ-Grad's).
COLORS = Palette("rlqgrad", {"backprop": "#0072B2", "parameter_shift": "#009E73", "adjoint": "#CC79A7"},
                 ours=("rlqgrad", "rlqgrad_proposal"))

FIG1_LABELS = {"backprop": "backprop", "parameter_shift": "parameter shift", "adjoint": "adjoint",
               "rlqgrad": "RLQ-Grad (update)"}
FIG1_STYLES = {"backprop": "-", "parameter_shift": "--", "adjoint": ":", "rlqgrad": "-"}
#: Line widths in Fig. 1 (a): the three exact methods give one curve, drawn widest first, so that each stays
#: visible on the one beneath.
FIG1_WIDTHS = {"backprop": 3.0, "parameter_shift": 1.6, "adjoint": 1.0}
FIG2_LABELS = {**FIG1_LABELS, "rlqgrad": "RLQ-Grad (update)", "rlqgrad_proposal": "RLQ-Grad (proposal alone)"}
FIG2_QUANTITIES = {"time_s": "CPU time per update (s)", "peak_mb": "peak allocated memory (MB)"}


def fig1(table: pd.DataFrame) -> plt.Figure:
    """Fig. 1: (a) log-scale variance vs n, one line per method (the three exact methods coincide: drawn widest
    first, each visible on the one beneath);
    (b) each method's slope of log10 variance per qubit with its claim's interval, the claim's
    threshold (dashed) and claimed band (shaded).

    A slope whose units cannot give an interval is drawn without a bar, and the panel says why.
    """
    fig, (ax, bx) = subplots(1, 2, width="text", height=2.4, gridspec_kw={"width_ratios": [1.15, 1]})
    curve = table[table["quantity"] == "mean_variance"]
    for method, grp in curve.groupby("method", sort=True):
        grp = grp.sort_values("n_qubits")
        lw = FIG1_WIDTHS.get(method, 1.1)
        ax.plot(grp["n_qubits"], grp["value"], FIG1_STYLES.get(method, "-"), marker="o", ms=2 + lw,
                lw=lw, zorder=2 + 1 / lw, color=COLORS(method), label=FIG1_LABELS.get(method, method))
    ax.set_yscale("log")
    ax.set_xticks(sorted(curve["n_qubits"].unique()))
    ax.set_xlabel("qubits n")
    ax.set_ylabel("Var over inits of d<Z0>/dθ\n(mean over θ and seeds)")
    ax.set_title("variance")
    slopes = table[table["quantity"] == "slope"].set_index("method")
    names = set(slopes.index) | set(curve["method"])
    order = [m for m in FIG1_LABELS if m in names] + sorted(names - set(FIG1_LABELS))
    handles = [Line2D([], [], color=COLORS(m), ls=FIG1_STYLES.get(m, "-"), lw=FIG1_WIDTHS.get(m, 1.1), marker="o",
                      ms=2 + FIG1_WIDTHS.get(m, 1.1)) for m in order]
    labels = [FIG1_LABELS.get(m, m) for m in order]
    if slopes.empty:
        not_built(bx, "no claim reads a slope of these curves")
    else:
        handles, labels = _slope_panel(bx, slopes.reindex([m for m in order if m in slopes.index]), handles, labels)
    panel_letters([ax, bx])
    legend(fig, where="below", handles=handles, labels=labels, ncol=3)
    return fig


def _slope_panel(bx: plt.Axes, slopes: pd.DataFrame, handles: list, labels: list) -> tuple[list, list]:
    """Fig. 1 (b): one row per method, its slope with the claim's interval, threshold and band; the legend's
    entries for them added to ``handles`` and ``labels``."""
    y = np.arange(len(slopes))[::-1]
    for yi, (method, r) in zip(y, slopes.iterrows()):
        if r["op"] in ("within", "outside"):
            bx.add_patch(Rectangle((r["threshold"] - r["tol"], yi - 0.4), 2 * r["tol"], 0.8, color=FLOOR, alpha=0.25,
                                   lw=0))
        else:
            bx.plot([r["threshold"]] * 2, [yi - 0.4, yi + 0.4], ls="--", color=REFERENCE, lw=0.8)
        bx.errorbar([r["value"]], [yi], xerr=interval_err([r["value"]], [r["low"]], [r["high"]]), fmt="o",
                    color=COLORS(method), capsize=2)
    bx.set_yticks(y, [FIG1_LABELS.get(m, m) for m in slopes.index])
    bx.set_ylim(-0.6, len(slopes) - 0.4)
    bx.grid(axis="y", visible=False)
    bx.set_xlabel("slope of log10 Var per qubit")
    counts = slopes["n"].dropna()
    title = f"slope, {n_text(counts, 'unit')}" if len(counts) else "slope"
    missing = slopes["low"].isna()
    if missing.any():  # too few units for the claim's level (or no slope at all): the point without a bar
        need = min_units(float(slopes["level"].max()))
        title += f"\n(no interval{'' if missing.all() else ' for ' + str(int(missing.sum()))}: {need} units needed)"
    bx.set_title(title)
    band = slopes["op"].isin(["within", "outside"])
    edges = slopes[~band]["threshold"].dropna().unique()
    if len(edges):
        handles = [*handles, Line2D([], [], ls="--", color=REFERENCE, lw=0.8)]
        labels = [*labels, "claim's threshold (" + ", ".join(f"{t:g}" for t in edges) + ")"]
    for tol in slopes[band]["tol"].dropna().unique():
        handles = [*handles, Patch(color=FLOOR, alpha=0.25, lw=0)]
        labels = [*labels, f"claimed band (±{tol:g})"]
    return handles, labels


def fig2_table(cost: pd.DataFrame) -> pd.DataFrame:
    """The long table of Fig. 2 from the cost table: (n_qubits, method, quantity, value)."""
    rows = []
    for r in cost.itertuples(index=False):
        rows.append((r.n_qubits, r.method, "time_s", r.step_cpu_s))
        rows.append((r.n_qubits, r.method, "peak_mb", r.step_peak_mb))
        if r.method == "rlqgrad":
            rows.append((r.n_qubits, "rlqgrad_proposal", "time_s", r.proposal_cpu_s))
            rows.append((r.n_qubits, "rlqgrad_proposal", "peak_mb", r.proposal_peak_mb))
    out = pd.DataFrame(rows, columns=["n_qubits", "method", "quantity", "value"])
    return out.sort_values(["quantity", "method", "n_qubits"]).reset_index(drop=True)


def fig2(table: pd.DataFrame) -> plt.Figure:
    """Fig. 2: CPU time (left) and peak memory (right) per update vs n, log scale, one line per method."""
    fig, axes = subplots(1, 2, width="text", height=2.3)
    for ax, (quantity, label) in zip(axes, FIG2_QUANTITIES.items()):
        sub = table[table["quantity"] == quantity]
        for method, grp in sub.groupby("method", sort=True):
            ax.plot(grp["n_qubits"], grp["value"], "--" if method == "rlqgrad_proposal" else "-", marker="o",
                    color=COLORS(method), label=FIG2_LABELS.get(method, method))
        ax.set_yscale("log")
        ax.set_xlabel("qubits n")
        ax.set_ylabel(label)
    panel_letters(axes)
    legend(fig, where="right")
    return fig
