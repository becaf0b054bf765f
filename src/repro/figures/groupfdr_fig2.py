"""groupfdr Fig. 2: mirror statistics of one replicate, and the FDP estimate with its threshold."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.methods.mirror import data_adaptive_threshold, fdp_curve

__all__ = ["tables", "build"]


def tables(stats: np.ndarray, is_true: np.ndarray, q: float) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """(per-group statistics, FDP^(t) curve on a grid, tau_q)."""
    stats = np.asarray(stats, float)
    order = np.argsort(-stats)
    groups = pd.DataFrame({"rank": np.arange(len(stats)), "group": order, "M": stats[order],
                           "is_true": np.asarray(is_true, bool)[order]})
    ts = np.sort(np.unique(np.abs(stats[stats != 0])))
    curve = pd.DataFrame({"t": ts, "fdp_hat": fdp_curve(stats, ts)})
    return groups, curve, data_adaptive_threshold(stats, q)


def build(groups: pd.DataFrame, curve: pd.DataFrame, tau: float, q: float):
    fig, (a, b) = plt.subplots(1, 2, figsize=(7.0, 2.8))
    colors = np.where(groups.is_true, "#D55E00", "#888888")
    a.bar(groups["rank"], groups.M, color=colors, width=0.9)
    if np.isfinite(tau):
        a.axhline(tau, color="black", ls="--", lw=0.8)
        a.axhline(-tau, color="black", ls=":", lw=0.8)
    a.set_xlabel("group (sorted by M)")
    a.set_ylabel("mirror statistic M")
    a.set_title("true groups (orange), nulls (grey)")
    b.step(curve.t, curve.fdp_hat, where="post", color="#0072B2")
    b.axhline(q, color="black", ls="--", lw=0.8, label=f"q = {q:g}")
    if np.isfinite(tau):
        b.axvline(tau, color="#D55E00", lw=0.8, label=f"tau_q = {tau:.3g}")
    b.set_xlabel("t")
    b.set_ylabel("FDP^(t)")
    b.set_ylim(0, 1.05)
    b.legend()
    fig.tight_layout()
    return fig
