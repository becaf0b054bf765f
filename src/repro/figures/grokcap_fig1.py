"""grokcap Fig. 1: T_mem(P) and T_gen(P) against parameters (log-log), fits, crossing, threshold."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter
import numpy as np
import pandas as pd

from repro.figures.style import method_color

__all__ = ["table", "build"]

SERIES = {"t_mem": ("random", "t_train", "T_mem (random labels, 99% train)"),
          "t_gen": ("modular", "t_val", "T_gen (modular task, 99% validation)")}


def table(runs: pd.DataFrame, metrics: dict) -> pd.DataFrame:
    """Tidy rows: per-seed times (censored runs at their cap, flagged) and the fitted power laws."""
    rows = []
    for name, (task, col, _) in SERIES.items():
        sub = runs[runs.task == task]
        for r in sub.itertuples(index=False):
            t = getattr(r, col)
            cens = bool(np.isnan(t))
            rows.append({"series": name, "kind": "run", "width": r.width, "seed": r.seed, "P": r.P,
                         "T": float(r.max_steps if cens else t), "censored": cens})
        fit = (metrics.get("power_law") or {}).get(name) or {}
        if len(sub) and fit.get("a") is not None and fit.get("b") is not None:
            for P in np.geomspace(sub.P.min(), sub.P.max(), 30):
                rows.append({"series": name, "kind": "fit", "width": -1, "seed": -1, "P": float(P),
                             "T": float(fit["a"] * P ** fit["b"]), "censored": False})
    return pd.DataFrame(rows, columns=["series", "kind", "width", "seed", "P", "T", "censored"])


def build(df: pd.DataFrame, metrics: dict) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(4.2, 3.2))
    for name, (_, _, label) in SERIES.items():
        color = method_color(name)
        runs = df[(df.series == name) & (df.kind == "run")]
        if len(runs):
            done = runs[~runs.censored.astype(bool)]
            if len(done):
                stats = done.groupby("P").T.agg(["mean", "std"]).reset_index()
                ax.errorbar(stats.P.to_numpy(float), stats["mean"].to_numpy(float),
                            yerr=stats["std"].fillna(0).to_numpy(float), color=color, marker="o", capsize=2,
                            label=f"{label}, mean ± sd")
            cens = runs[runs.censored.astype(bool)]
            ax.scatter(cens.P.to_numpy(float), cens["T"].to_numpy(float), facecolors="none", edgecolors=color, marker="^",
                       label=f"{name}: censored at step cap" if len(cens) else None)
        fit = (metrics.get("power_law") or {}).get(name) or {}
        line = df[(df.series == name) & (df.kind == "fit")]
        if len(line):
            interval = f" [{fit['b_lo']:.2f}, {fit['b_hi']:.2f}]" if fit.get("b_lo") is not None else ""
            ax.plot(line.P.to_numpy(float), line["T"].to_numpy(float), color=color, ls="--", lw=1,
                    label=f"{name} fit a P^b, b = {fit['b']:.2f}{interval}")
    cross = metrics.get("crossing") or {}
    thr = (metrics.get("grokking") or {}).get("threshold_P")
    for value, style, label in ((cross.get("empirical_P"), ":", "crossing (medians)"),
                                (cross.get("power_law_P"), "-.", "crossing (power laws)"),
                                (thr, "-", "grokking threshold")):
        if value is not None and math.isfinite(value):
            ax.axvline(value, color="0.3", ls=style, lw=1, label=f"{label}: P = {value:.3g}")
    if not len(df):
        ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center")
    ax.set(xscale="log", yscale="log", xlabel="parameters P", ylabel="steps to 99% accuracy",
           title="Memorisation vs generalisation speed")
    ax.xaxis.set_minor_formatter(NullFormatter())  # decade labels only: minor ones overlap
    ax.legend(loc="best", fontsize=5.5)
    fig.tight_layout()
    return fig
