"""MDA-DD Fig. 2: initialisation overfitting, seen minus unseen R@1 per method and size."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import method_color

__all__ = ["build"]


def build(gap: pd.DataFrame) -> plt.Figure:
    """``gap``: columns method, n_pairs, seen, unseen, gap (from ``repro.methods.mdd_report.init_gap``)."""
    fig, ax = plt.subplots(figsize=(4.5, 2.8))
    methods = sorted(gap["method"].unique())
    sizes = sorted(gap["n_pairs"].unique())
    width = 0.8 / max(len(methods), 1)
    for j, method in enumerate(methods):
        g = gap[gap["method"] == method].set_index("n_pairs").reindex(sizes)
        ax.bar(np.arange(len(sizes)) + (j - (len(methods) - 1) / 2) * width, g["gap"], width,
               color=method_color(method), label=method)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(np.arange(len(sizes)), [str(s) for s in sizes])
    ax.set_xlabel("distilled pairs")
    ax.set_ylabel("R@1 seen - unseen (points)")
    ax.set_title("Initialisation overfitting")
    ax.legend()
    fig.tight_layout()
    return fig
