"""The figures of "Modelling Opinion Dynamics at Scale with Deep MARL" (arXiv 2606.07487).

One builder per figure, each taking the tidy table it plots (the CSV written beside the PDF):

- :func:`fig1`: collective accuracy vs alpha, one panel per graph family (large static, small
  dynamic), one line per method (mean over seeds, bars: standard error), from :func:`sweep_table`.
- :func:`fig2`: rate of dishonest stances vs alpha: the learned agents' lying rate (belief probe)
  and every method's contrary-to-signal rate. A rate is a mean over the seeds where it is defined; where
  it is defined for none (the contrary rate at alpha = 0, where nobody is informed; the lying rate of
  agents that never take a stance) the point is "n/a", not a 0.
- :func:`fig3`: Spearman correlation of learned attention with node centrality, per graph and averaged
  over graphs (the claims' quantity), trained vs untrained policy, and the paired difference trained -
  untrained of the average; each with the interval the claims decide on (:func:`repro.claims.claim_interval`:
  a 95% bootstrap over seeds, none from fewer than :func:`repro.stats.intervals.min_units` seeds).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from repro.claims import Claim, claim_interval, lookup_metric
from repro.figures.style import (FLOOR, REFERENCE, Palette, interval_err, legend, mark_missing, n_text, not_built,
                                 panel_letters, se_err, subplots)
from repro.papers.opinion.experiment import MEASURED_BY
from repro.stats.intervals import min_units

__all__ = ["COLORS", "sweep_table", "fig1", "fig2", "fig3_table", "fig3"]

COLORS = Palette("opinion", {"marl_noop": "#E69F00", "bayes_honest": "#0072B2", "degroot": "#009E73",
                             "voter": "#CC79A7", "majority": "#56B4E9", "oracle": REFERENCE, "random": FLOOR,
                             "untrained": "#999933", "difference": "#882255"}, ours="marl")
ORDER = ("marl", "marl_noop", "bayes_honest", "degroot", "voter", "majority", "oracle", "random")
QUANTITY_LABELS = {"lying_rate": "lying rate (belief probe)", "contrary_rate": "contrary to own signal"}
QUANTITY_SHORT = {"lying_rate": "lying", "contrary_rate": "contrary"}
FAMILY_TITLES = {"static": "static (scale-free)", "dynamic": "dynamic (camps, ties switching)"}


def sweep_table(results: pd.DataFrame, column: str) -> pd.DataFrame:
    """Mean, standard error and n of ``column`` per family, method and alpha, over the seeds where it is defined.

    Every method that measures ``column`` (:data:`MEASURED_BY`) has a row per family and alpha; where no seed
    has the value defined (a rate with no denominator) the row has n = 0 and no mean, drawn as "n/a". No s.e.
    for a single seed.
    """
    sel = results[results.method.isin(MEASURED_BY[column])] if column in MEASURED_BY else results
    g = sel.groupby(["family", "method", "alpha"])[column]
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
                grp = grp.sort_values("alpha")  # an undefined mean (NaN) breaks the line: no point, no bar
                ax.errorbar(grp["alpha"], grp["mean"], yerr=se_err(grp["mean"], grp["sem"], bounds=(0, 1)),
                            fmt=(styles or {}).get(quantity, "-"), marker="o", color=COLORS(method))
        _mark_undefined(ax, part, several=part.quantity.nunique() > 1)
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
    defined = table.n[table.n > 0]
    legend(fig, where="right", handles=handles, labels=labels,
           title=f"mean ± s.e.\nover seeds,\n{n_text(defined, 'seed') if len(defined) else 'no seed'}"
                 + ("\nn/a: undefined\nfor every seed" if (table.n == 0).any() else ""))
    return fig


def _mark_undefined(ax: plt.Axes, part: pd.DataFrame, several: bool) -> None:
    """Mark "n/a" at each alpha where a method's rate is defined for no seed: one line per quantity, naming the
    methods unless it is every method of the panel."""
    for alpha, miss in part[part.n == 0].groupby("alpha"):
        lines = []
        for quantity, q in miss.groupby("quantity", sort=True):
            at = part[(part.quantity == quantity) & (part.alpha == alpha)]
            who = "" if set(q.method) == set(at.method) else ": " + ", ".join(_ordered(q.method))
            lines.append("n/a" + (f" ({QUANTITY_SHORT.get(quantity, quantity)})" if several else "") + who)
        ha = "left" if alpha == part.alpha.min() else "right" if alpha == part.alpha.max() else "center"  # on the panel
        mark_missing(ax, [alpha], 0.03, text="\n".join(lines), axes_y=True, fontsize=6, ha=ha)


def fig1(table: pd.DataFrame) -> plt.Figure:
    """Fig. 1: collective accuracy vs alpha."""
    return _panels(table, "collective accuracy (final stance = truth)")


def fig2(table: pd.DataFrame) -> plt.Figure:
    """Fig. 2: dishonest stances vs alpha (solid: belief-probe lying rate; dashed: contrary to own signal)."""
    return _panels(table, "rate of dishonest stances", styles={"lying_rate": "-", "contrary_rate": "--"})


#: The claims Fig. 3 draws: the trained policy's rho with degree averaged over graphs, and its paired difference
#: from the untrained policy's; the other centralities and each graph are drawn with the same checks' intervals.
CLAIM_RECOVERS, CLAIM_BEYOND = "attention_recovers_centrality", "attention_beyond_untrained"
MEAN_SLOT, DIFF_SLOT = "mean over graphs", "trained - untrained"
FIG3_COLUMNS = ["centrality", "graph", "policy", "rho", "low", "high", "n", "claim", "interval"]


def _per_seed(metrics: dict, path: str) -> dict[str, float]:
    """The seeds of a sample in ``metrics`` whose value is defined (null: undefined), id -> value."""
    node = lookup_metric(metrics, path)
    return {u: float(v) for u, v in zip(node["ids"], node["values"]) if v is not None and v == v}


def fig3_table(metrics: dict, claims: list[Claim]) -> pd.DataFrame:
    """Per centrality: mean rho over the seeds where it is defined, per graph and averaged over graphs (trained and
    untrained policy), and the paired difference trained - untrained of the average; ``low``/``high``: the
    interval the claims form (:func:`repro.claims.claim_interval`, the checks of :data:`CLAIM_RECOVERS` and
    :data:`CLAIM_BEYOND` on each metric), NaN where they form none (``interval`` says why: too few seeds).
    ``claim`` names the claim a row is the decided quantity of.
    """
    by_id = {c.id: c for c in claims}
    missing = [k for k in (CLAIM_RECOVERS, CLAIM_BEYOND) if k not in by_id]
    if missing:
        raise ValueError(f"opinion fig3: the claims file has no {missing}")
    recovers, beyond = by_id[CLAIM_RECOVERS], by_id[CLAIM_BEYOND]
    rows = []

    def row(c: str, graph: str, policy: str, claim: Claim, metric: str, rhs: float | str, values: list[float]):
        iv, why = claim_interval(claim, metrics, metric, rhs)
        decided = claim.metric == metric and claim.rhs == rhs
        rows.append({"centrality": c, "graph": graph, "policy": policy,
                     "rho": iv.estimate if iv else float(np.mean(values)) if values else np.nan,
                     "low": iv.low if iv else np.nan, "high": iv.high if iv else np.nan,
                     "n": iv.n if iv else len(values), "claim": claim.id if decided else "",
                     "interval": iv.method if iv else why})

    for c, graphs in (metrics.get("attention") or {}).items():
        for graph in sorted(graphs):
            for policy, root in (("trained", "attention"), ("untrained", "attention_untrained")):
                metric = f"{root}.{c}.{graph}"
                row(c, graph, policy, recovers, metric, 0.0, list(_per_seed(metrics, metric).values()))
        trained, untrained = f"attention_mean_over_graphs.{c}", f"attention_untrained_mean_over_graphs.{c}"
        for policy, metric in (("trained", trained), ("untrained", untrained)):
            row(c, MEAN_SLOT, policy, recovers, metric, recovers.rhs, list(_per_seed(metrics, metric).values()))
        a, b = _per_seed(metrics, trained), _per_seed(metrics, untrained)
        row(c, DIFF_SLOT, "difference", beyond, trained, untrained, [a[u] - b[u] for u in a if u in b])
    return pd.DataFrame(rows, columns=FIG3_COLUMNS)


def fig3(table: pd.DataFrame) -> plt.Figure:
    """Fig. 3: rank correlation of attention with centrality per graph, averaged over graphs (the claims'
    quantity) and trained - untrained; dots: means over seeds; bars: the claims' 95% bootstrap intervals."""
    cents = list(dict.fromkeys(table["centrality"]))
    ncols = min(max(len(cents), 1), 3)  # a fetched weighted graph adds two comparisons: a second row
    nrows = -(-max(len(cents), 1) // ncols)
    fig, grid = subplots(nrows, ncols, width="text", height=2.6 * nrows, squeeze=False, sharey=True)
    axes = grid.ravel()
    for ax in axes[len(cents):] if cents else ():
        ax.set_visible(False)
    for ax, c in zip(axes, cents):
        sub = table[table.centrality == c]
        slots = [g for g in dict.fromkeys(sub.graph) if g not in (MEAN_SLOT, DIFF_SLOT)] + [MEAN_SLOT, DIFF_SLOT]
        x = {g: i for i, g in enumerate(slots)}
        for policy, shift in (("trained", -0.15), ("untrained", 0.15), ("difference", 0.0)):
            p = sub[sub.policy == policy]
            xs = np.array([x[g] for g in p.graph], dtype=float) + shift
            ax.errorbar(xs, p["rho"], yerr=interval_err(p["rho"], p["low"], p["high"]), fmt="o", color=COLORS(
                "marl" if policy == "trained" else policy), label=f"{policy} policy" if policy != "difference"
                else "trained - untrained\n(paired, per seed)")
            mark_missing(ax, xs[p["rho"].isna().to_numpy()], 0.03, axes_y=True, rotation=90, fontsize=6)
        ax.axhline(0, color="black", lw=0.6)
        ax.axvline(x[MEAN_SLOT] - 0.5, color="0.6", lw=0.6, ls=":")
        ax.set_xticks(np.arange(len(slots)), slots, rotation=35, ha="right", rotation_mode="anchor")
        ax.grid(axis="x", visible=False)
        ax.set_title(f"vs {c}")
    for row in grid if cents else ():
        row[0].set_ylabel("Spearman rho, attention vs centrality")
    if not cents:
        not_built(axes[0], "no attention measured at this alpha")
    panel_letters(axes[:max(len(cents), 1)])
    if len(table):
        drawn = table.n[table.n > 0]
        title = (f"mean over seeds;\nbars: the claims'\n95% bootstrap\nover seeds (none\nbelow "
                 f"{min_units(0.95)} seeds),\n{n_text(drawn, 'seed') if len(drawn) else 'no seed'}")
        legend(fig, where="right", title=title)
    return fig
