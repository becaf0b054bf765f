"""grokcap Fig. 2: accuracy curves on the modular task for widths below, at and above the crossing."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["pick_widths", "table", "build"]


def pick_widths(P_by_width: dict[int, int], pivot: float | None) -> list[int]:
    """Three widths: the smallest, the one nearest ``pivot`` in log P, the largest (fewer if equal)."""
    widths = sorted(P_by_width)
    if pivot is None or not math.isfinite(pivot):
        mid = widths[len(widths) // 2]
    else:
        mid = min(widths, key=lambda w: abs(math.log(P_by_width[w] / pivot)))
    return list(dict.fromkeys([widths[0], mid, widths[-1]]))


def table(curves: pd.DataFrame, metrics: dict) -> pd.DataFrame:
    """The modular-task curves of the three chosen widths, every seed."""
    mod = curves[curves.task == "modular"]
    P_by_width = mod.groupby("width").P.first().to_dict()
    cross = metrics.get("crossing") or {}
    pivot = cross.get("empirical_P")
    if pivot is None or not math.isfinite(pivot):
        pivot = (metrics.get("grokking") or {}).get("threshold_P")
    keep = pick_widths(P_by_width, pivot)
    return mod[mod.width.isin(keep)][["width", "P", "seed", "step", "train_acc", "val_acc"]].reset_index(drop=True)


def build(df: pd.DataFrame) -> plt.Figure:
    widths = sorted(df.width.unique())
    fig, axes = plt.subplots(1, max(len(widths), 1), figsize=(2.3 * max(len(widths), 1), 2.4), sharey=True,
                             squeeze=False)
    for ax, width in zip(axes[0], widths):
        sub = df[df.width == width]
        for seed, g in sub.groupby("seed"):
            ax.plot(g.step, g.train_acc, color="#0072B2", lw=0.9, alpha=0.8, label="train" if seed == sub.seed.min() else None)
            ax.plot(g.step, g.val_acc, color="#D55E00", lw=0.9, alpha=0.8, label="validation" if seed == sub.seed.min() else None)
        ax.axhline(0.99, color="0.5", ls=":", lw=0.8)
        ax.set(xscale="log", xlabel="step", title=f"width {width}, P = {int(sub.P.iloc[0]):,}", ylim=(-0.02, 1.02))
    axes[0][0].set_ylabel("accuracy")
    axes[0][0].legend(loc="upper left")
    fig.tight_layout()
    return fig
