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
from matplotlib.lines import Line2D

from repro.figures.style import (FLOOR, REFERENCE, Palette, interval_err, legend, n_text, not_built, panel_letters,
                                 subplots)
from repro.stats.intervals import t_interval

__all__ = ["COLORS", "sweep_table", "fig1", "fig2", "fig3_table", "fig3", "table1"]

COLORS = Palette("opinion", {"marl_noop": "#E69F00", "bayes_honest": "#0072B2", "degroot": "#009E73",
                             "voter": "#CC79A7", "majority": "#56B4E9", "oracle": REFERENCE, "random": FLOOR,
                             "untrained": "#999933"}, ours="marl")
ORDER = ("marl", "marl_noop", "bayes_honest", "degroot", "voter", "majority", "oracle", "random")
QUANTITY_LABELS = {"lying_rate": "lying rate (belief probe)", "contrary_rate": "contrary to own signal"}
FAMILY_TITLES = {"static": "static (scale-free)", "dynamic": "dynamic (camps, ties switching)"}


def sweep_table(results: pd.DataFrame, column: str) -> pd.DataFrame:
    """Mean, standard error and n of ``column`` per family, method and alpha (no s.e. for a single seed)."""
    g = results.dropna(subset=[column]).groupby(["family", "method", "alpha"])[column]
    out = g.agg(["mean", "sem", "count"]).reset_index().rename(columns={"count": "n"})
    out.insert(3, "quantity", column)
    return out


def _ordered(methods) -> list[str]:
    return [m for m in ORDER if m in set(methods)] + sorted(set(methods) - set(ORDER))


def _panels(table: pd.DataFrame, ylabel: str, styles: dict[str, str] | None = None) -> plt.Figure:
    """One panel per graph family, a line per method (colour) and, with ``styles``, per quantity (line style).

    One legend for the figure: the methods by colour, then the quantities by line style.
    """
    families = [f for f in ("static", "dynamic") if f in set(table.family)]
    fig, axes = subplots(1, len(families), width="text", height=2.3, squeeze=False, sharey=True)
    for ax, family in zip(axes[0], families):
        part = table[table.family == family]
        for method in _ordered(part.method):
            for quantity, grp in part[part.method == method].groupby("quantity", sort=True):
                grp = grp.sort_values("alpha")
                ax.errorbar(grp["alpha"], grp["mean"], yerr=grp["sem"], fmt=(styles or {}).get(quantity, "-"),
                            marker="o", color=COLORS(method))
        ax.set_title(FAMILY_TITLES.get(family, family))
    fig.supxlabel("alpha (truth weight; low = conforming)")
    axes[0][0].set_ylabel(ylabel)
    panel_letters(axes[0])
    methods = _ordered(table.method)
    handles = [Line2D([], [], color=COLORS(m), marker="o") for m in methods]
    labels = list(methods)
    if styles:
        quantities = [q for q in styles if q in set(table.quantity)]
        handles += [Line2D([], [], color="0.3", ls=styles[q]) for q in quantities]
        labels += [QUANTITY_LABELS.get(q, q) for q in quantities]
    legend(fig, where="right", handles=handles, labels=labels, title=f"mean ± s.e.\nover seeds,\n{n_text(table.n, 'seed')}")
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
        # a correlation lies in [-1, 1]: the t interval is cut to it
        rows.append({"graph": graph, "centrality": c, "policy": policy, "rho": ci.estimate,
                     "low": max(ci.low, -1.0), "high": min(ci.high, 1.0), "n": ci.n})
    return pd.DataFrame(rows, columns=["graph", "centrality", "policy", "rho", "low", "high", "n"])


def fig3(table: pd.DataFrame) -> plt.Figure:
    """Fig. 3: rank correlation of learned attention with centrality, per graph (dots: means; bars: 95% CI)."""
    cents = list(dict.fromkeys(table["centrality"]))
    fig, axes = subplots(1, max(len(cents), 1), width="text", height=2.3, squeeze=False, sharey=True)
    for ax, c in zip(axes[0], cents):
        sub = table[table.centrality == c]
        graphs = sorted(set(sub.graph))
        for k, (policy, color) in enumerate((("trained", COLORS("marl")), ("untrained", COLORS("untrained")))):
            p = sub[sub.policy == policy].set_index("graph").reindex(graphs)
            xs = np.arange(len(graphs)) + (k - 0.5) * 0.25
            ax.errorbar(xs, p["rho"], yerr=interval_err(p["rho"], p["low"], p["high"]), fmt="o", color=color,
                        label=f"{policy} policy")
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(np.arange(len(graphs)), graphs, rotation=30, ha="right", rotation_mode="anchor")
        ax.set_title(f"vs {c}")
    axes[0][0].set_ylabel("Spearman rho, attention vs centrality")
    if not cents:
        not_built(axes[0][0], "no attention measured at this alpha")
    panel_letters(axes[0])
    legend(fig, where="right", title=f"mean over seeds,\n95% t interval\n(cut to [-1, 1]),\n{n_text(table.n, 'seed')}"
           if len(table) else None)
    return fig


def table1(results: pd.DataFrame) -> pd.DataFrame:
    """Table 1: every method per family and alpha: accuracy, agreement, lying and contrary rates, label bias (means, n)."""
    cols = [c for c in ("accuracy", "agreement", "lying_rate", "contrary_rate", "label_bias", "mean_return")
            if c in results]
    out = results.groupby(["family", "alpha", "method"])[cols].mean().reset_index()
    out["n_seeds"] = results.groupby(["family", "alpha", "method"]).size().to_numpy()
    return out
