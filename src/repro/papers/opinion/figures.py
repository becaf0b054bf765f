"""The figures of "Modelling Opinion Dynamics at Scale with Deep MARL" (arXiv 2606.07487).

One builder per figure, each taking the tidy table it plots (the CSV written beside the PDF):

- :func:`fig1`: collective accuracy vs alpha, one panel per graph family (large static, small
  dynamic), one line per method (mean over seeds, bars: standard error), from :func:`sweep_table`.
- :func:`fig2`: rate of dishonest stances vs alpha: the learned agents' lying rate (belief probe)
  and every method's contrary-to-signal rate.
- :func:`fig3`: Spearman correlation of learned attention with node centrality, per graph (mean
  over seeds with a 95% t interval), trained vs untrained policy.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import Palette
from repro.stats.intervals import t_interval

__all__ = ["COLORS", "sweep_table", "fig1", "fig2", "fig3_table", "fig3", "table1"]

COLORS = Palette({"marl": "#D55E00", "marl_noop": "#E69F00", "bayes_honest": "#0072B2", "degroot": "#009E73",
                  "voter": "#CC79A7", "majority": "#56B4E9", "oracle": "#000000", "random": "#999999"})
FAMILY_TITLES = {"static": "large static (scale-free)", "dynamic": "small dynamic (camps, rewired)"}


def sweep_table(results: pd.DataFrame, column: str) -> pd.DataFrame:
    """Mean, standard error and n of ``column`` per family, method and alpha."""
    g = results.dropna(subset=[column]).groupby(["family", "method", "alpha"])[column]
    out = g.agg(["mean", "sem", "count"]).reset_index().rename(columns={"count": "n"})
    out.insert(3, "quantity", column)
    return out.fillna({"sem": 0.0})


def _panels(table: pd.DataFrame, ylabel: str, styles: dict[str, str] | None = None) -> plt.Figure:
    families = [f for f in ("static", "dynamic") if f in set(table.family)]
    fig, axes = plt.subplots(1, len(families), figsize=(3.3 * len(families), 2.6), squeeze=False, sharey=True)
    for ax, family in zip(axes[0], families):
        for (method, quantity), grp in table[table.family == family].groupby(["method", "quantity"], sort=True):
            grp = grp.sort_values("alpha")
            ls = (styles or {}).get(quantity, "-")
            ax.errorbar(grp["alpha"], grp["mean"], yerr=grp["sem"], fmt=ls, marker="o", capsize=2,
                        color=COLORS(method), label=f"{method}" + (f" ({quantity})" if styles else ""))
        ax.set_title(FAMILY_TITLES.get(family, family))
        ax.set_xlabel("alpha (truth weight; low = conforming)")
    axes[0][0].set_ylabel(ylabel)
    axes[0][-1].legend(loc="best")
    fig.tight_layout()
    return fig


def fig1(table: pd.DataFrame) -> plt.Figure:
    """Fig. 1: collective accuracy vs alpha."""
    return _panels(table, "collective accuracy (final stance = truth)")


def fig2(table: pd.DataFrame) -> plt.Figure:
    """Fig. 2: dishonest stances vs alpha (solid: belief-probe lying rate; dashed: contrary to own signal)."""
    return _panels(table, "rate of dishonest stances", styles={"lying_rate": "-", "contrary_rate": "--"})


def fig3_table(attention: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Mean rho and its 95% t interval over seeds, per graph, centrality and policy, at ``alpha``."""
    rows = []
    for (graph, c, policy), grp in attention[attention.alpha == alpha].dropna(subset=["rho"]).groupby(
            ["graph", "centrality", "policy"]):
        ci = t_interval(grp["rho"].to_numpy())
        rows.append({"graph": graph, "centrality": c, "policy": policy, "rho": ci.estimate, "low": ci.low,
                     "high": ci.high, "n": ci.n})
    return pd.DataFrame(rows, columns=["graph", "centrality", "policy", "rho", "low", "high", "n"])


def fig3(table: pd.DataFrame) -> plt.Figure:
    """Fig. 3: rank correlation of learned attention with centrality, per graph (dots: means; bars: 95% CI)."""
    cents = list(dict.fromkeys(table["centrality"]))
    fig, axes = plt.subplots(1, max(len(cents), 1), figsize=(3.0 * max(len(cents), 1), 2.6), squeeze=False, sharey=True)
    for ax, c in zip(axes[0], cents):
        sub = table[table.centrality == c]
        graphs = sorted(set(sub.graph))
        for k, (policy, color) in enumerate((("trained", COLORS("marl")), ("untrained", "#999999"))):
            p = sub[sub.policy == policy].set_index("graph").reindex(graphs)
            xs = np.arange(len(graphs)) + (k - 0.5) * 0.25
            err = np.vstack([p["rho"] - p["low"], p["high"] - p["rho"]]).clip(min=0)
            ax.errorbar(xs, p["rho"], yerr=np.nan_to_num(err), fmt="o", capsize=2, color=color, label=policy)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(np.arange(len(graphs)), graphs, rotation=30, ha="right")
        ax.set_title(f"attention vs {c}")
    axes[0][0].set_ylabel("Spearman rho (per seed, mean ± 95% CI)")
    axes[0][-1].legend(loc="best")
    fig.tight_layout()
    return fig


def table1(results: pd.DataFrame) -> pd.DataFrame:
    """Table 1: every method per family and alpha: accuracy, agreement, lying and contrary rates, label bias (means, n)."""
    cols = [c for c in ("accuracy", "agreement", "lying_rate", "contrary_rate", "label_bias", "mean_return")
            if c in results]
    out = results.groupby(["family", "alpha", "method"])[cols].mean().reset_index()
    out["n_seeds"] = results.groupby(["family", "alpha", "method"]).size().to_numpy()
    return out
