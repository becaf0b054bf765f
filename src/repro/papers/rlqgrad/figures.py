"""The figures of RLQ-Grad ("Modeling quantum neural network gradient with reinforcement learning").

One builder per figure, each taking the tidy table it plots (the CSV written beside the PDF):

- :func:`fig1`: the barren-plateau curve, variance of the (surrogate) gradient against n, from
  ``results/rlqgrad/variance.csv`` (method, n_qubits, mean_variance, seeds).
- :func:`fig2`: CPU time and peak allocated memory of one update against n, per method, from the
  long table :func:`fig2_table` makes of ``results/rlqgrad/cost.csv`` (n_qubits, method, quantity,
  value), with RLQ-Grad's proposal alone as a series of its own.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import Palette, legend, panel_letters, subplots

__all__ = ["COLORS", "fig1", "fig2_table", "fig2"]

#: The fixed colour of each training method (RLQ-Grad's proposal alone shares RLQ-Grad's).
COLORS = Palette("rlqgrad", {"backprop": "#0072B2", "parameter_shift": "#009E73", "adjoint": "#CC79A7"},
                 ours=("rlqgrad", "rlqgrad_proposal"))

FIG1_LABELS = {"backprop": "backprop", "parameter_shift": "parameter shift", "adjoint": "adjoint",
               "rlqgrad": "RLQ-Grad (update)"}
FIG1_STYLES = {"backprop": "-", "parameter_shift": "--", "adjoint": ":", "rlqgrad": "-"}
FIG2_LABELS = {**FIG1_LABELS, "rlqgrad": "RLQ-Grad (update)", "rlqgrad_proposal": "RLQ-Grad (proposal alone)"}
FIG2_QUANTITIES = {"time_s": "CPU time per update (s)", "peak_mb": "peak allocated memory (MB)"}


def fig1(table: pd.DataFrame) -> plt.Figure:
    """Fig. 1: log-scale variance vs n, one line per method (the three exact methods coincide)."""
    fig, ax = subplots(width="column", height=2.5)
    for method, grp in table.groupby("method", sort=True):
        grp = grp.sort_values("n_qubits")
        ax.plot(grp["n_qubits"], grp["mean_variance"], FIG1_STYLES.get(method, "-"), marker="o",
                color=COLORS(method), label=FIG1_LABELS.get(method, method))
    ax.set_yscale("log")
    ax.set_xlabel("qubits n")
    ax.set_ylabel("Var over inits of d<Z0>/dθ\n(mean over θ)")
    legend(fig, where="below", ncol=2)
    return fig


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
