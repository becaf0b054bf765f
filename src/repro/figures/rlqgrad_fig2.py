"""rlqgrad Fig. 2: wall time and peak allocated memory of one update against n, per method.

:func:`tidy` turns ``results/rlqgrad/cost.csv`` into the long table the figure plots
(n_qubits, method, quantity, value), with RLQ-Grad's proposal alone as a series of its own.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import method_color

__all__ = ["tidy", "build"]

QUANTITIES = {"time_s": "CPU time per update (s)", "peak_mb": "peak allocated memory (MB)"}


def tidy(cost: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for r in cost.itertuples(index=False):
        rows.append((r.n_qubits, r.method, "time_s", r.step_cpu_s))
        rows.append((r.n_qubits, r.method, "peak_mb", r.step_peak_mb))
        if r.method == "rlqgrad":
            rows.append((r.n_qubits, "rlqgrad_proposal", "time_s", r.proposal_cpu_s))
            rows.append((r.n_qubits, "rlqgrad_proposal", "peak_mb", r.proposal_peak_mb))
    out = pd.DataFrame(rows, columns=["n_qubits", "method", "quantity", "value"])
    return out.sort_values(["quantity", "method", "n_qubits"]).reset_index(drop=True)


def build(table: pd.DataFrame) -> plt.Figure:
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.6))
    for ax, (quantity, label) in zip(axes, QUANTITIES.items()):
        sub = table[table["quantity"] == quantity]
        for method, grp in sub.groupby("method", sort=True):
            base = "rlqgrad" if method.startswith("rlqgrad") else method
            ax.plot(grp["n_qubits"], grp["value"], "--" if method == "rlqgrad_proposal" else "-", marker="o",
                    color=method_color(base), label=method.replace("_", " "))
        ax.set_yscale("log")
        ax.set_xlabel("qubits n")
        ax.set_ylabel(label)
    axes[0].legend()
    fig.tight_layout()
    return fig
