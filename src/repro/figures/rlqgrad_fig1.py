"""rlqgrad Fig. 1: the barren-plateau curve, variance of the (surrogate) gradient against n.

Takes the tidy table of ``results/rlqgrad/variance.csv`` (method, n_qubits, mean_variance, seeds).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import method_color

__all__ = ["build"]

LABELS = {"backprop": "backprop", "parameter_shift": "parameter shift", "adjoint": "adjoint", "rlqgrad": "RLQ-Grad (update)"}
STYLES = {"backprop": "-", "parameter_shift": "--", "adjoint": ":", "rlqgrad": "-"}


def build(table: pd.DataFrame) -> plt.Figure:
    """Log-scale variance vs n, one line per method (the three exact methods coincide)."""
    fig, ax = plt.subplots(figsize=(3.4, 2.6))
    for method, grp in table.groupby("method", sort=True):
        grp = grp.sort_values("n_qubits")
        ax.plot(grp["n_qubits"], grp["mean_variance"], STYLES.get(method, "-"), marker="o",
                color=method_color(method), label=LABELS.get(method, method))
    ax.set_yscale("log")
    ax.set_xlabel("qubits n")
    ax.set_ylabel("Var over inits of d<Z0>/dθ (mean over θ)")
    ax.legend()
    fig.tight_layout()
    return fig
