"""modellens figures: Fig. 1 (NDCG@K by seen/unseen split) and Fig. 2 (regret vs cost), Fig. 3 (routing over top-K pools), and colours.

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.figures.style import FLOOR, REFERENCE, Palette, legend, mean_se, n_text, subplots

__all__ = ["COLORS", "ORDER", "fig1_table", "fig1", "fig2_table", "fig2", "fig3_table", "fig3"]

COLORS = Palette("modellens", {"text_knn": "#0072B2", "meta_knn": "#56B4E9", "mf": "#009E73", "popularity": "#CC79A7",
                               "random": FLOOR, "oracle": REFERENCE, "run_all": "#E69F00", "full_pool": "#882255"},
                 ours="modellens")
ORDER = ("oracle", "run_all", "modellens", "text_knn", "meta_knn", "mf", "popularity", "random")
SPLIT_LABELS = {"seen_seen": "seen model\nseen data", "unseen_seen": "unseen model\nseen data",
                "seen_unseen": "seen model\nunseen data", "unseen_unseen": "unseen model\nunseen data"}


def _ordered(methods) -> list[str]:
    return [m for m in ORDER if m in set(methods)] + sorted(set(methods) - set(ORDER))


def fig1_table(tidy: pd.DataFrame, k: int) -> pd.DataFrame:
    """Mean and s.e. over seeds of NDCG@k per (split, method)."""
    return mean_se(tidy, ["split", "method"], f"ndcg@{k}")


def fig1(table: pd.DataFrame, k: int):
    splits = [s for s in SPLIT_LABELS if s in set(table.split)]
    methods = _ordered(table.method)
    fig, ax = subplots(width="text", height=2.2)
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        part = table[table.method == m].set_index("split").reindex(splits)
        ax.bar(np.arange(len(splits)) + (i - (len(methods) - 1) / 2) * width, part["mean"], width,
               yerr=part["se"], color=COLORS(m), label=m, error_kw={"lw": 0.6})
    ax.set_xticks(np.arange(len(splits)), [SPLIT_LABELS[s] for s in splits])
    ax.grid(axis="x", visible=False)
    ax.set_ylabel(f"NDCG@{k}")
    ax.set_ylim(0, 1.02)
    legend(ax, title=f"mean ± s.e.\nover seeds,\n{n_text(table.n_seeds, 'seed')}")
    return fig


def fig2_table(regret: pd.DataFrame) -> pd.DataFrame:
    """Mean regret over seeds per (method, cost)."""
    return mean_se(regret, ["method", "cost"], "regret", name="regret")


def fig2(table: pd.DataFrame):
    fig, ax = subplots(width="column", height=2.6)
    for m in _ordered(table.method):
        part = table[table.method == m].sort_values("cost")
        ax.errorbar(part.cost, part.regret, yerr=part.se, color=COLORS(m), marker="o", label=m)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("candidates run on the probe set (cost)")
    ax.set_ylabel("regret (true quality)")
    legend(fig, where="below", ncol=3, title=f"mean ± s.e. over seeds, {n_text(table.n_seeds, 'seed')}")
    return fig


def fig3_table(routing: pd.DataFrame) -> pd.DataFrame:
    """Mean routing accuracy over seeds per (method, K)."""
    return mean_se(routing, ["method", "k"], "accuracy", name="accuracy")


def fig3(table: pd.DataFrame):
    fig, ax = subplots(width="column", height=2.6)
    for m in _ordered(set(table.method) - {"full_pool", "run_all"}):
        part = table[table.method == m].sort_values("k")
        ax.errorbar(part.k, part.accuracy, yerr=part.se, color=COLORS(m), marker="o", label=m)
    full = table[table.method == "full_pool"]
    if not full.empty:
        ax.axhline(full.accuracy.mean(), color=COLORS("full_pool"), ls="--", lw=0.8, label="full pool")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("pool size K")
    ax.set_ylabel("routed accuracy")
    legend(fig, where="below", ncol=3, title=f"mean ± s.e. over seeds, {n_text(table.n_seeds, 'seed')}")
    return fig
