"""gtp figures: Fig. 1 (score per method and distance bucket), Fig. 2 (success vs goal distance),
Fig. 3 (score vs planning budget), and the method colours.

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import Palette, mean_se

__all__ = ["COLORS", "ORDER", "fig1_table", "fig1", "fig2_table", "fig2", "fig3_table", "fig3"]

COLORS = Palette({"gtp": "#D55E00", "mppi": "#0072B2", "cem": "#009E73", "diffusion_policy": "#CC79A7",
                  "td3bc": "#E69F00", "oracle": "#000000", "random": "#888888"})
ORDER = ("oracle", "gtp", "mppi", "cem", "diffusion_policy", "td3bc", "random")


def _ordered(methods) -> list[str]:
    return [m for m in ORDER if m in set(methods)] + sorted(set(methods) - set(ORDER))


def _mean_se(tidy: pd.DataFrame, keys: list[str], col: str) -> pd.DataFrame:
    """Mean and s.e. over seeds of each seed's mean of ``col`` per ``keys``."""
    return mean_se(tidy.groupby(keys + ["seed"])[col].mean().reset_index(), keys, col)


def _bucket_label(lo, hi) -> str:
    return f"{int(lo)}-{int(hi)}"


def fig1_table(tidy: pd.DataFrame, main_n: int) -> pd.DataFrame:
    """Mean and s.e. over seeds of the score per (method, distance bucket) at the main budget."""
    return _mean_se(tidy[tidy.n_samples == main_n], ["method", "bucket", "dist_lo", "dist_hi"], "score")


def fig1(table: pd.DataFrame):
    buckets = sorted(table.bucket.unique())
    methods = _ordered(table.method)
    labels = [_bucket_label(*table[table.bucket == b][["dist_lo", "dist_hi"]].iloc[0]) for b in buckets]
    fig, ax = plt.subplots(figsize=(6.0, 3.0))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        part = table[table.method == m].set_index("bucket").reindex(buckets)
        ax.bar(np.arange(len(buckets)) + (i - (len(methods) - 1) / 2) * width, part["mean"], width,
               yerr=part["se"], color=COLORS(m), label=m, capsize=1.5)
    ax.set_xticks(np.arange(len(buckets)), labels)
    ax.set_xlabel("optimal steps to the goal")
    ax.set_ylabel("return / optimal return")
    ax.set_ylim(0, 1.05)
    ax.legend(ncol=3, fontsize=7)
    fig.tight_layout()
    return fig


def fig2_table(tidy: pd.DataFrame, main_n: int) -> pd.DataFrame:
    """Mean and s.e. over seeds of the success rate per (method, distance bucket) at the main budget."""
    t = _mean_se(tidy[tidy.n_samples == main_n], ["method", "bucket", "dist_lo", "dist_hi"], "success")
    return t.assign(distance=(t.dist_lo + t.dist_hi) / 2)


def fig2(table: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(4.2, 3.0))
    for m in _ordered(table.method):
        part = table[table.method == m].sort_values("distance")
        ax.errorbar(part.distance, part["mean"], yerr=part.se, color=COLORS(m), marker="o", ms=3, capsize=1.5, label=m)
    ax.set_xlabel("optimal steps to the goal (bucket centre)")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.05)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def fig3_table(tidy: pd.DataFrame, main_n: int) -> pd.DataFrame:
    """Mean and s.e. over seeds of the score per (planner, candidates per iteration), with model evaluations."""
    planners = tidy[tidy.method.isin(["gtp", "mppi", "cem"])]
    t = _mean_se(planners, ["method", "n_samples"], "score")
    evals = planners.groupby(["method", "n_samples"]).evals.mean().rename("model_evals_per_decision")
    return t.merge(evals.reset_index(), on=["method", "n_samples"])


def fig3(table: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(4.2, 3.0))
    for m in _ordered(table.method):
        part = table[table.method == m].sort_values("n_samples")
        ax.errorbar(part.model_evals_per_decision, part["mean"], yerr=part.se, color=COLORS(m), marker="o", ms=3,
                    capsize=1.5, label=m)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("model evaluations per decision")
    ax.set_ylabel("return / optimal return")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
