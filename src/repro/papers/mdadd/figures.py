"""MDA-DD's figures: one builder per figure, each taking the tidy table it plots (written as its CSV).

- Fig. 1 (:func:`fig1`, table from :func:`fig1_table`): TR@1 and IR@1 against the number of
  distilled pairs, full-data training on top (mean +- sd over units: the spread of single students);
  and the recall claims' quantity, MDA-DD minus the best baseline at the smallest size, paired by
  unit, with the interval the claims are decided on.
- Fig. 2 (:func:`fig2`, table from :func:`fig2_table`): initialisation overfitting, seen minus unseen
  R@1 per method and size (mean +- sd over units); and the queue claim's quantity, MDA-DD's gap minus
  the no-queue ablation's, paired by unit, per size and averaged over sizes, the average with the
  interval the claim is decided on.
- Fig. 3 (:func:`fig3`): measured cost of the cross-modal second moment, SOCM (Gram form) vs the
  full matrix.

The claims' intervals come from the aggregate's table (:func:`repro.papers.mdadd.experiment.claim_intervals`,
computed by :func:`repro.claims.interval_rows`): a claim with too few distillation seeds for its level
has none, and the figure says so rather than drawing another interval in its place.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import FLOOR, OURS, REFERENCE, Palette, interval_err, legend, n_text, panel_letters, subplots
from repro.papers.mdadd.experiment import init_gap_units
from repro.stats.intervals import min_units

__all__ = ["COLORS", "COST_FORMS", "FIG1_CLAIMS", "FIG2_CLAIM", "fig1_table", "fig1", "fig2_table", "fig2", "fig3"]

#: The methods' fixed colours (mdadd_noqueue: MDA-DD without its queue, an ablation).
COLORS = Palette("mdadd", {"mdadd_noqueue": "#E69F00", "random": FLOOR, "herding": "#0072B2", "covmatch": "#009E73",
                           "lors": "#CC79A7", "full": REFERENCE}, ours="mdadd")
#: Fig. 3's two forms of the second-moment term: colour and label (SOCM is ours).
COST_FORMS = {"socm": (OURS, "SOCM (Gram form)"), "naive": ("#0072B2", "full moment matrix")}
#: The claims Fig. 1 draws, by the metric they read (MDA-DD at the smallest size) -> the recall it is.
FIG1_CLAIMS = {"evidence.mdadd_tr1_smallest": "TR@1", "evidence.mdadd_ir1_smallest": "IR@1"}
#: The claim Fig. 2 draws, by the metric it reads (MDA-DD's initialisation gap, averaged over sizes).
FIG2_CLAIM = "evidence.gap_r1_mdadd"
#: What the bars over units are where no claim decides the point.
SD_BARS = "sd over units (distillation seed x unseen initialisation), the spread of single students"


def _sd_rows(values: pd.DataFrame, keys: list[str], bounds: tuple[float, float]) -> pd.DataFrame:
    """Mean, sd and n of ``value`` per ``keys``, with the sd bar's ends cut at ``bounds``."""
    out = values.groupby(keys)["value"].agg(["mean", "std", "count"]).reset_index().rename(columns={"count": "n"})
    out["low"] = (out["mean"] - out["std"]).clip(*bounds)
    out["high"] = (out["mean"] + out["std"]).clip(*bounds)
    out["interval"] = SD_BARS
    return out


def _dodge(methods) -> dict[str, float]:
    """A factor per method that spreads the methods' points on a log x axis (0.006 of a decade
    apart), so that no bar hides another; the tables keep the true sizes."""
    methods = sorted(methods)
    return {m: 10 ** (0.006 * (j - (len(methods) - 1) / 2)) for j, m in enumerate(methods)}


def _claim_row(row: pd.Series, **columns) -> dict:
    """A figure row of one claim's interval (from :func:`repro.papers.mdadd.experiment.claim_intervals`)."""
    return {**columns, "mean": row["estimate"], "low": row["low"], "high": row["high"], "n": row["n_units"],
            "n_seeds": row["n_seeds"], "level": row["level"], "interval": row["interval"], "claim": row["claim"],
            "status": row["status"]}


def fig1_table(tidy: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """Fig. 1's rows. ``panel`` "recall": mean, sd and number ``n`` of the units (distillation seed x unseen
    initialisation) of TR@1 and IR@1 per method and size, ``low``/``high`` the sd bar cut at 0 and 100.
    ``panel`` "claim": for each claim of :data:`FIG1_CLAIMS` (rows of ``claims``, the aggregate's
    :func:`repro.papers.mdadd.experiment.claim_intervals`), MDA-DD minus the best baseline at the smallest
    size, the mean paired difference over units, with the interval the claim is decided on (NaN: none)."""
    sel = tidy[(tidy["init"] == "unseen") & tidy["metric"].isin(["TR@1", "IR@1"])]
    recall = _sd_rows(sel, ["metric", "method", "n_pairs"], (0, 100))
    recall.insert(0, "panel", "recall")
    smallest = int(sel.loc[sel["method"] == "mdadd", "n_pairs"].min())
    rows = [_claim_row(r, panel="claim", metric=FIG1_CLAIMS[r["metric"]], method=f"mdadd - {r['rhs_method']}",
                       n_pairs=smallest)
            for _, r in claims[claims["metric"].isin(FIG1_CLAIMS)].iterrows()]
    return pd.concat([recall, pd.DataFrame(rows)], ignore_index=True)


def _no_interval(rows: pd.DataFrame) -> str:
    """Why the claims' points have no bar (too few distillation seeds for the level), or ""."""
    missing = rows[rows["low"].isna()]
    if missing.empty:
        return ""
    level = float(missing["level"].max())
    return f"no interval: {min_units(level)} seeds\nneeded at {level:.0%}"


def _claim_points(ax, x, rows: pd.DataFrame, n: str) -> None:
    """The claims' points at ``x`` with the intervals they are decided on, and the claims' threshold, 0;
    the x label says how many units are paired (``n``) and, where a claim has no interval, why."""
    ax.errorbar(x, rows["mean"], yerr=interval_err(rows["mean"], rows["low"], rows["high"]), color=COLORS("mdadd"),
                marker="D", ls="none", label="claim's quantity")
    ax.axhline(0, color="black", lw=0.8)
    ax.grid(axis="x", visible=False)
    why = _no_interval(rows)
    seeds = rows["n_seeds"].dropna()
    seeds = f"in {int(seeds.max())} distillation seed{'s' if seeds.max() != 1 else ''}" if len(seeds) else ""
    ax.set_xlabel(f"paired by unit, {n}\n{seeds.strip()}" + (f";\n{why}" if why else ""))


def fig1(table: pd.DataFrame) -> plt.Figure:
    """``table``: output of :func:`fig1_table`. (a) TR@1 and (b) IR@1 against the pairs, mean +- sd over
    units; (c) the recall claims: MDA-DD minus the best baseline at the smallest size, paired by unit,
    with the claims' intervals."""
    fig, axes = subplots(1, 3, width="text", height=2.6, sharey=False, gridspec_kw={"width_ratios": [1, 1, 1]})
    recall = table[table["panel"] == "recall"]
    for ax, metric in zip(axes, ["TR@1", "IR@1"]):
        t = recall[recall["metric"] == metric]
        dodge = _dodge(set(t["method"]) - {"full"})
        for method, g in t[t["method"] != "full"].groupby("method", sort=True):
            g = g.sort_values("n_pairs")
            ax.errorbar(g["n_pairs"] * dodge[method], g["mean"], yerr=interval_err(g["mean"], g["low"], g["high"]), marker="o",
                        color=COLORS(method), label=method)
        full = t[t["method"] == "full"]
        if len(full):
            ax.axhline(float(full["mean"].iloc[0]), color=COLORS("full"), ls="--", label="full data")
        ax.set_xscale("log")
        sizes = sorted(t.loc[t["method"] != "full", "n_pairs"].unique())
        ax.set_xticks(sizes, [str(s) for s in sizes])
        ax.minorticks_off()
        ax.set_xlabel("distilled pairs")
        ax.set_ylabel(f"{metric} (%)")
        ax.set_title(f"{metric}, unseen inits")
    claims = table[table["panel"] == "claim"]
    x = np.arange(len(claims))
    _claim_points(axes[2], x, claims, n_text(claims["n"], "unit"))
    axes[2].set_xticks(x, [f"{m}\nvs {b.split(' - ')[1]}" for m, b in zip(claims["metric"], claims["method"])])
    axes[2].set_xlim(-0.6, len(claims) - 0.4)
    axes[2].set_ylabel("MDA-DD - best baseline")
    axes[2].set_title(f"claims at {int(claims['n_pairs'].iloc[0])} pairs")
    panel_letters(axes)
    n = n_text(recall.loc[recall["method"] != "full", "n"])
    legend(fig, where="below", ncol=5, title=f"(a, b): mean ± sd over distillation seed x unseen init, {n}")
    return fig


def fig2_table(tidy: pd.DataFrame, claims: pd.DataFrame, *, method: str = "mdadd",
               ablation: str = "mdadd_noqueue") -> pd.DataFrame:
    """Fig. 2's rows. ``panel`` "gap": seen minus unseen R@1 per method and size (methods with seen
    initialisations), mean, sd and number ``n`` of the units (:func:`repro.papers.mdadd.experiment.init_gap_units`),
    ``low``/``high`` the sd bar. ``panel`` "claim": ``method``'s gap minus ``ablation``'s, the mean paired
    difference over units, per size (no interval: no claim reads one size) and averaged over sizes
    (``n_pairs`` NaN), the quantity of the claim on :data:`FIG2_CLAIM` with the interval it is decided on."""
    units = init_gap_units(tidy, by_size=True).rename(columns={"gap": "value"})
    gap = _sd_rows(units, ["method", "n_pairs"], (-100, 100))
    gap.insert(0, "panel", "gap")
    keys = ["n_pairs", "distill_seed", "run"]
    paired = units[units["method"] == method].merge(units[units["method"] == ablation], on=keys, suffixes=("", "_abl"))
    paired["value"] = paired["value"] - paired["value_abl"]
    rows = [{"panel": "claim", "method": f"{method} - {ablation}", "n_pairs": n, "mean": g["value"].mean(),
             "low": np.nan, "high": np.nan, "n": len(g), "interval": "one size: no claim reads it, no interval"}
            for n, g in paired.groupby("n_pairs")]
    rows += [_claim_row(r, panel="claim", method=f"{method} - {ablation}", n_pairs=np.nan)
             for _, r in claims[claims["metric"] == FIG2_CLAIM].iterrows()]
    return pd.concat([gap, pd.DataFrame(rows)], ignore_index=True)


def fig2(table: pd.DataFrame) -> plt.Figure:
    """``table``: output of :func:`fig2_table`. (a) seen minus unseen R@1 per method against the pairs,
    mean +- sd over units; (b) the queue claim: MDA-DD's gap minus the no-queue ablation's, paired by
    unit, per size and averaged over sizes (the claim's quantity, with its interval)."""
    fig, axes = subplots(1, 2, width="text", height=2.6, gridspec_kw={"width_ratios": [1.3, 1]})
    ax = axes[0]
    gap = table[table["panel"] == "gap"]
    dodge = _dodge(set(gap["method"]))
    for method, g in gap.groupby("method", sort=True):
        g = g.sort_values("n_pairs")
        ax.errorbar(g["n_pairs"] * dodge[method], g["mean"], yerr=interval_err(g["mean"], g["low"], g["high"]), marker="o",
                    color=COLORS(method), label=method)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xscale("log")
    sizes = sorted(gap["n_pairs"].unique())
    ax.set_xticks(sizes, [str(int(s)) for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("distilled pairs")
    ax.set_ylabel("R@1 seen - unseen")
    ax.set_title(f"initialisation overfitting, {n_text(gap['n'], 'unit')}")
    claim = table[table["panel"] == "claim"]
    per_size, overall = claim[claim["n_pairs"].notna()], claim[claim["n_pairs"].isna()]
    ax = axes[1]
    ax.plot(np.arange(len(per_size)), per_size["mean"], marker="o", ls="none", color=COLORS("mdadd"), mfc="white",
            label="one size (no claim)")
    _claim_points(ax, len(per_size) + np.arange(len(overall)), overall, n_text(claim["n"], "unit"))
    labels = [str(int(n)) for n in per_size["n_pairs"]] + ["mean over\nsizes"] * len(overall)
    ax.set_xticks(np.arange(len(labels)), labels)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylabel("gap: MDA-DD - no queue")
    ax.set_title("queue effect, by distilled pairs")
    panel_letters(axes)
    legend(fig, where="below", ncol=4, title="(a): mean ± sd over distillation seed x unseen init")
    return fig


def fig3(cost: pd.DataFrame) -> plt.Figure:
    """``cost``: columns dim, form (socm / naive), time_s, memory_bytes."""
    fig, axes = subplots(1, 2, width="text", height=2.3)
    for form, g in cost.groupby("form"):
        color, label = COST_FORMS.get(form, ("#888888", form))
        g = g.sort_values("dim")
        axes[0].plot(g["dim"], g["time_s"] * 1e3, marker="o", color=color, label=label)
        axes[1].plot(g["dim"], g["memory_bytes"] / 2**20, marker="o", color=color, label=label)
    for ax, ylabel in zip(axes, ["time, forward + backward (ms)", "intermediate memory (MiB)"]):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("feature dimension d")
        ax.set_ylabel(ylabel)
    axes[0].set_title("measured time")
    axes[1].set_title("moment intermediates")
    panel_letters(axes)
    legend(fig, where="right")
    return fig
