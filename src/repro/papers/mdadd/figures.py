"""MDA-DD's figures: one builder per figure, each taking the tidy table it plots (written as its CSV).

- Fig. 1 (:func:`fig1`, table from :func:`fig1_table`): TR@1 and IR@1 against the number of
  distilled pairs, full-data training on top (mean +- sd over units: the spread of single students);
  and the recall claims' quantities (:data:`FIG1_CLAIMS`: MDA-DD minus the best baseline at the
  smallest size in TR@1 and IR@1, and its mean recall at the smallest size minus the best baseline's at
  the largest), paired by unit, with the intervals the claims are decided on and their claimed relations.
- Fig. 2 (:func:`fig2`, table from :func:`fig2_table`): initialisation overfitting, seen minus unseen
  R@1 per method and size (mean +- sd over units); and the queue claim's quantity, MDA-DD's gap minus
  the no-queue ablation's, paired by unit, per size (no claim reads one size: no interval) and averaged
  over sizes, the average with the interval the claim is decided on.
- Fig. 3 (:func:`fig3`, table from :func:`fig3_table`): measured cost of the cross-modal second moment,
  SOCM (Gram form) vs the full matrix; and the cost claim's quantity, the difference of the two forms'
  log-log slopes of time against dimension, paired by timing repeat, with the interval it is decided on.

The claims' intervals are the checker's own (:func:`repro.claims.interval_rows`), drawn by
:func:`repro.figures.claims.draw_claims`: Figs. 1 and 2 read them from the aggregate's table
(:func:`repro.papers.mdadd.experiment.claim_intervals`), Fig. 3 forms the cost claim's from the timing table
(:func:`repro.claimtables.claim_table` on :func:`repro.papers.mdadd.experiment.cost_summary`, as the aggregate's
metrics hold it). A claim with too few units for its level has none, and the figure says so rather than
drawing another interval in its place.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.claims import draw_claims, no_interval_text, relation_text, with_better
from repro.figures.style import (FLOOR, OURS, REFERENCE, Palette, interval_err, legend, n_text, new_figure,
                                 not_built, panel_letters, subplots)
from repro.papers.mdadd.experiment import init_gap_units

__all__ = ["COLORS", "COST_FORMS", "FIG1_CLAIMS", "FIG2_CLAIM", "FIG3_CLAIM", "fig1_table", "fig1", "fig2_table",
           "fig2", "fig3_table", "fig3"]

#: The methods' fixed colours (mdadd_noqueue: MDA-DD without its queue, an ablation).
COLORS = Palette("mdadd", {"mdadd_noqueue": "#E69F00", "random": FLOOR, "herding": "#0072B2", "covmatch": "#009E73",
                           "lors": "#CC79A7", "full": REFERENCE}, ours="mdadd")
#: Fig. 3's two forms of the second-moment term: colour and label (SOCM is ours).
COST_FORMS = {"socm": (OURS, "SOCM (Gram form)"), "naive": ("#0072B2", "full moment matrix")}
#: The claims Fig. 1 draws, in order, by id -> the recall they compare and whether the best baseline is taken
#: at the largest size (the mean-recall claims: MDA-DD at the smallest size against the baselines at the largest).
FIG1_CLAIMS = {"tr1_beats_baselines_100": ("TR@1", False), "ir1_beats_baselines_100": ("IR@1", False),
               "hundred_pairs_match_baselines_at_500": ("mR", True),
               "hundred_pairs_match_baselines_at_500_noninferior": ("mR", True)}
#: The claim Fig. 2 draws, by the metric it reads (MDA-DD's initialisation gap, averaged over sizes).
FIG2_CLAIM = "evidence.gap_r1_mdadd"
#: The claim Fig. 3 draws (SOCM's slope of time against dimension below the full matrix's, paired by repeat).
FIG3_CLAIM = "socm_cost_scales_better"
#: What the bars over units are where no claim decides the point.
SD_BARS = "sd over units (distillation seed x unseen initialisation), the spread of single students"
#: The columns a claim's row carries into a figure's table (beside the quantity, its interval and n).
CLAIM_FIELDS = ("op", "threshold", "tol", "claim", "status")


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
    """A figure row of one claim's interval (a row of :func:`repro.papers.mdadd.experiment.claim_intervals`):
    ``n`` the units of its sample, ``n_checked`` the units its interval is formed over (the distillation seeds
    the checker resamples, or the repeats)."""
    return {**columns, "mean": row["estimate"], "low": row["low"], "high": row["high"], "n": row["n_units"],
            "n_seeds": row["n_seeds"], "n_checked": row["n"], "level": row["level"], "interval": row["interval"],
            **{c: row[c] for c in CLAIM_FIELDS}}


def fig1_table(tidy: pd.DataFrame, claims: pd.DataFrame, paper_claims: list | None = None) -> pd.DataFrame:
    """Fig. 1's rows. ``panel`` "recall": mean, sd and number ``n`` of the units (distillation seed x unseen
    initialisation) of TR@1 and IR@1 per method and size, ``low``/``high`` the sd bar cut at 0 and 100.
    ``panel`` "claim": each claim of :data:`FIG1_CLAIMS` the build checks (rows of ``claims``, the aggregate's
    :func:`repro.papers.mdadd.experiment.claim_intervals`), in that order: MDA-DD's recall at the smallest size
    (``n_pairs``) minus the best baseline's (``method``) at the smallest or, for the mean recall, the largest
    size (``rhs_pairs``), the mean paired difference over units, with the interval the claim is decided on
    (NaN: none), its claimed relation (``op``, ``threshold``, ``tol``; with ``paper_claims``, the paper's
    :func:`repro.claims.load_claims`, ``better``: the side a non-inferiority claim's margin lies on) and verdict
    (``status``)."""
    sel = tidy[(tidy["init"] == "unseen") & tidy["metric"].isin(["TR@1", "IR@1"])]
    recall = _sd_rows(sel, ["metric", "method", "n_pairs"], (0, 100))
    recall.insert(0, "panel", "recall")
    sizes = tidy.loc[(tidy["method"] == "mdadd") & (tidy["init"] == "unseen"), "n_pairs"]
    smallest, largest = int(sizes.min()), int(sizes.max())
    rows = [_claim_row(r, panel="claim", metric=FIG1_CLAIMS[r["claim"]][0], method=f"mdadd - {r['rhs_method']}",
                       n_pairs=smallest, rhs_pairs=largest if FIG1_CLAIMS[r["claim"]][1] else smallest)
            for _, r in claims.set_index("claim").reindex([c for c in FIG1_CLAIMS if c in set(claims["claim"])])
            .reset_index().iterrows()]
    drawn = pd.DataFrame(rows)
    if paper_claims is not None and len(drawn):
        drawn = with_better(drawn, paper_claims)
    return pd.concat([recall, drawn], ignore_index=True)


def _claims_panel(ax, rows: pd.DataFrame, x, ticks: list[str]) -> None:
    """The claims' rows at ``x`` (open markers: a quantity no claim reads) with the intervals they are decided
    on and their claimed relations; the x label says how many units are paired, in how many distillation
    seeds (the clusters the checker resamples), and, where a claim has no interval, why."""
    draw_claims(ax, rows.rename(columns={"mean": "estimate"}), x, colors=COLORS("mdadd"))
    ax.set_xticks(x, ticks)
    checked = rows[rows["claim"].fillna("") != ""]
    seeds = checked["n_seeds"].dropna()
    seeds = f" in {int(seeds.max())} distillation seed{'s' if seeds.max() != 1 else ''}" if len(seeds) else ""
    why = no_interval_text(checked.drop(columns="n").rename(columns={"mean": "estimate", "n_checked": "n"}),
                           "distillation seed")
    ax.set_xlabel(f"paired by unit,\n{n_text(checked['n'], 'unit')}{seeds}" + (f";\n{why}" if why else ""))


def _recall_tick(row: pd.Series) -> str:
    """A recall claim's slot label: the recall, the best baseline (at its size where it is not MDA-DD's) and
    the claimed relation."""
    baseline = row["method"].split(" - ")[1]
    versus = f"vs {baseline}" if row["n_pairs"] == row["rhs_pairs"] else f"vs {baseline}\nat {int(row['rhs_pairs'])}"
    return f"{row['metric']}\n{versus}\n({relation_text(row, short=True)})"


def fig1(table: pd.DataFrame) -> plt.Figure:
    """``table``: output of :func:`fig1_table`. (a) TR@1 and (b) IR@1 against the pairs, mean +- sd over
    units; (c) the recall claims: MDA-DD at the smallest size minus the best baseline, paired by unit, with
    the intervals the claims are decided on and their claimed relations."""
    # two subfigures, each laid out on its own: the recall curves and their legend above, the claims below
    fig = new_figure("text", 2.6 + 1.9)
    top, bottom = fig.subfigures(2, 1, height_ratios=[2.6, 1.9])
    axes = [*top.subplots(1, 2), bottom.subplots()]
    recall = table[table["panel"] == "recall"]
    for ax, metric in zip(axes, ["TR@1", "IR@1"]):
        t = recall[recall["metric"] == metric]
        dodge = _dodge(set(t["method"]) - {"full"})
        for method, g in t[t["method"] != "full"].groupby("method", sort=True):
            g = g.sort_values("n_pairs")
            ax.errorbar(g["n_pairs"] * dodge[method], g["mean"], yerr=interval_err(g["mean"], g["low"], g["high"]),
                        marker="o", color=COLORS(method), label=method)
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
    claims = table[table["panel"] == "claim"].reset_index(drop=True)
    if claims.empty:
        not_built(axes[2], "no recall claim's metric in this build")
    else:
        ticks = [_recall_tick(r) for _, r in claims.iterrows()]
        _claims_panel(axes[2], claims, np.arange(len(claims)), ticks)
        axes[2].set_ylabel("MDA-DD - best baseline\n(recall, % points)")
        axes[2].set_title(f"claims: MDA-DD at {int(claims['n_pairs'].iloc[0])} pairs")
    panel_letters(axes)
    n = n_text(recall.loc[recall["method"] != "full", "n"])
    legend(top, where="below", ncol=5, title=f"(a, b): mean ± sd over distillation seed x unseen init, {n}")
    return fig


def fig2_table(tidy: pd.DataFrame, claims: pd.DataFrame, *, method: str = "mdadd",
               ablation: str = "mdadd_noqueue") -> pd.DataFrame:
    """Fig. 2's rows. ``panel`` "gap": seen minus unseen R@1 per method and size (methods with seen
    initialisations), mean, sd and number ``n`` of the units (:func:`repro.papers.mdadd.experiment.init_gap_units`),
    ``low``/``high`` the sd bar. ``panel`` "claim": ``method``'s gap minus ``ablation``'s, the mean paired
    difference over units, per size (no interval: no claim reads one size) and averaged over sizes
    (``n_pairs`` NaN), the quantity of the claim on :data:`FIG2_CLAIM` with the interval it is decided on,
    its claimed relation and verdict."""
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
    unit, per size (open: no claim reads one size) and averaged over sizes (the claim's quantity, with its
    interval and claimed relation)."""
    fig, axes = subplots(1, 2, width="text", height=2.6, gridspec_kw={"width_ratios": [1.3, 1]})
    ax = axes[0]
    gap = table[table["panel"] == "gap"]
    dodge = _dodge(set(gap["method"]))
    for method, g in gap.groupby("method", sort=True):
        g = g.sort_values("n_pairs")
        ax.errorbar(g["n_pairs"] * dodge[method], g["mean"], yerr=interval_err(g["mean"], g["low"], g["high"]),
                    marker="o", color=COLORS(method), label=method)
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
    rows = pd.concat([per_size, overall], ignore_index=True)
    labels = [str(int(n)) for n in per_size["n_pairs"]] + \
        [f"mean over\nsizes ({relation_text(r, short=True)})" for _, r in overall.iterrows()]
    _claims_panel(axes[1], rows, np.arange(len(rows)), labels)
    axes[1].set_ylabel("gap: MDA-DD - no queue")
    axes[1].set_title("queue effect, by distilled pairs\n(open: one size, no claim)")
    panel_letters(axes)
    legend(fig, where="below", ncol=4, title="(a): mean ± sd over distillation seed x unseen init")
    return fig


def fig3_table(cost: pd.DataFrame, claims: list) -> pd.DataFrame:
    """Fig. 3's rows. ``panel`` "cost": per dimension and form the minimum time over the timing repeats and
    the intermediate memory (:func:`repro.papers.mdadd.experiment.cost_table`). ``panel`` "claim": the cost
    claim :data:`FIG3_CLAIM` (of ``claims``, the paper's :func:`repro.claims.load_claims`) on the per-repeat
    slopes that the aggregate's metrics hold (:func:`repro.papers.mdadd.experiment.cost_summary` of the same
    timing table): SOCM's log-log slope of time against dimension minus the full matrix's, the mean over the
    repeats of the paired difference, with the interval its verdict is decided on
    (:func:`repro.claimtables.claim_table`), its claimed relation and verdict; none without per-repeat times."""
    from repro.claimtables import claim_table
    from repro.papers.mdadd.experiment import cost_summary, cost_table

    table = cost_table(cost).assign(panel="cost")
    rows = claim_table(claims, {"cost": cost_summary(cost)}, [FIG3_CLAIM])
    if rows.empty:
        return table
    drawn = pd.DataFrame({"panel": "claim", "form": "socm - naive", "mean": rows["estimate"], "low": rows["low"],
                          "high": rows["high"], "n": rows["n"], "level": rows["level"], "interval": rows["interval"],
                          **{c: rows[c] for c in CLAIM_FIELDS}})
    return pd.concat([table, drawn], ignore_index=True)


def fig3(table: pd.DataFrame) -> plt.Figure:
    """``table``: output of :func:`fig3_table` (or the timing table alone: columns dim, form (socm / naive),
    time_s, memory_bytes). (a) time and (b) intermediate memory against the feature dimension; (c) the cost
    claim: SOCM's slope of time against dimension minus the full matrix's, paired by repeat, with its interval
    and claimed relation."""
    cost = table[table["panel"] == "cost"] if "panel" in table else table
    claim = table[table["panel"] == "claim"] if "panel" in table else table.iloc[:0]
    fig, axes = subplots(1, 3, width="text", height=2.5, gridspec_kw={"width_ratios": [1, 1, 0.8]})
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
    axes[0].set_title("measured time\n(minimum over repeats)")
    axes[1].set_title("moment intermediates")
    if claim.empty:
        not_built(axes[2], "no per-repeat timings: the cost claim has no sample")
    else:
        claim = claim.reset_index(drop=True)
        draw_claims(axes[2], claim.rename(columns={"mean": "estimate"}), colors=COLORS("mdadd"))
        axes[2].set_xticks([0], [f"SOCM − full\n({relation_text(claim.iloc[0], short=True)})"])
        why = no_interval_text(claim.rename(columns={"mean": "estimate"}), "repeat").replace(": ", ":\n")
        axes[2].set_xlabel(f"paired by repeat,\n{n_text(claim['n'], 'repeat')}" + (f";\n{why}" if why else ""))
        axes[2].set_ylabel("claim: difference of log-log\nslopes of time in d")
        axes[2].set_title("claim")
    panel_letters(axes)
    legend(fig, where="below", ncol=2)
    return fig
