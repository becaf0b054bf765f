"""m2le figures: Fig. 1 (task-1 accuracy and running average over the sequence, and the claims' paired
differences) and Fig. 2 (distribution of HIM's element-wise modulation per layer, with the scalar optimum
marked, and the spread of the modulation the claim reads).

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV). The curves are means over
seeds with their s.e. (no claim reads a curve); a claim's quantity is drawn with the interval its verdict
is decided on, from the aggregate's table (:func:`repro.papers.m2le.experiment.claim_intervals`, the
checker's own intervals): paired by seed, and none where too few seeds give one (the panel says so).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.figures.claims import draw_claims, no_interval_text, relation_text
from repro.figures.style import (FLOOR, REFERENCE, Palette, legend, mean_se, n_text, new_figure, not_built,
                                 panel_letters, se_err, subplots)

__all__ = ["COLORS", "CURVE_BARS", "FIG1_CLAIMS", "fig1_table", "fig1", "fig2_table", "fig2"]

COLORS = Palette("m2le", {"him": "#E69F00", "pm": "#0072B2", "fixed": "#56B4E9", "seq": FLOOR, "olora": "#009E73",
                          "ewc": "#CC79A7", "joint": REFERENCE}, ours="m2le")
ORDER = ("m2le", "him", "pm", "fixed", "olora", "ewc", "seq", "joint")
LABELS = {"m2le": "M²LE (HIM+TSP)", "him": "HIM", "pm": "P&M scalar", "fixed": "fixed scalar", "seq": "sequential",
          "olora": "O-LoRA", "ewc": "EWC", "joint": "joint (ceiling)"}
#: What the curves' bars are (no claim reads a curve).
CURVE_BARS = "mean ± s.e. over seeds, cut at 0 and 1"
#: The claims Fig. 1 draws, by the metric group they read (one claim per sequence) -> the method on the left of
#: the paired difference (its colour) and the slot's label.
FIG1_CLAIMS = {"m2le_minus_best_peft": ("m2le", "M²LE\n− best\nPEFT"),
               "him_minus_best_scalar": ("him", "HIM\n− best\nscalar"),
               "tsp_gain": ("m2le", "M²LE\n− HIM\n(TSP)")}
#: The columns a claim's row adds to a figure's table (from the aggregate's claim intervals).
CLAIM_FIELDS = ("level", "op", "threshold", "tol", "claim", "status")


def _claim_rows(claims: pd.DataFrame, groups) -> pd.DataFrame:
    """The rows of ``claims`` (the aggregate's claim intervals) whose metric is ``<group>.<sequence>`` for a group
    of ``groups``, with ``quantity`` (the group) and ``sequence`` split from the metric path."""
    parts = claims["metric"].str.split(".", n=1, expand=True)
    out = claims.assign(quantity=parts[0], sequence=parts[1])
    return out[out["quantity"].isin(list(groups))]


def fig1_table(curve: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """Fig. 1's rows. ``panel`` "curve": mean and s.e. over seeds per (sequence, method, after_task, metric),
    ``low``/``high`` the s.e. bar cut at 0 and 1 (:data:`CURVE_BARS`). ``panel`` "claim": each claim of
    :data:`FIG1_CLAIMS` (rows of ``claims``, the aggregate's :func:`repro.papers.m2le.experiment.claim_intervals`):
    ``metric`` the quantity (a difference of average accuracy after the last task, paired by seed), ``mean``
    its estimate, ``low``/``high`` the interval its verdict is decided on (NaN: none), ``n_seeds`` its seeds."""
    long = curve.melt(id_vars=["sequence", "seed", "method", "after_task"], value_vars=["task1_acc", "running_avg"],
                      var_name="metric")
    out = mean_se(long, ["sequence", "metric", "method", "after_task"], "value")
    out["low"], out["high"] = (out["mean"] - out["se"]).clip(0, 1), (out["mean"] + out["se"]).clip(0, 1)
    out["interval"], out["panel"] = CURVE_BARS, "curve"
    rows = _claim_rows(claims, FIG1_CLAIMS)
    drawn = pd.DataFrame({"sequence": rows["sequence"], "metric": rows["quantity"],
                          "method": [FIG1_CLAIMS[q][0] for q in rows["quantity"]], "after_task": np.nan,
                          "mean": rows["estimate"], "se": np.nan, "n_seeds": rows["n"], "low": rows["low"],
                          "high": rows["high"], "interval": rows["interval"], "panel": "claim",
                          **{c: rows[c] for c in CLAIM_FIELDS}})
    return pd.concat([out, drawn], ignore_index=True)


def _claims_panel(ax, rows: pd.DataFrame, order) -> list[str]:
    """The claims of one sequence in the slots of ``order`` (quantity names), with the intervals their verdicts
    are decided on; returns the slots' tick labels."""
    rows = rows.set_index("metric").reindex(list(order)).reset_index()
    drawn = rows.dropna(subset=["claim"])
    draw_claims(ax, drawn.rename(columns={"mean": "estimate"}), x=drawn.index.to_numpy(),
                colors=[COLORS(m) for m in drawn["method"]])
    ax.set_xlim(-0.6, len(order) - 0.4)
    return [FIG1_CLAIMS[q][1] if isinstance(r["claim"], str) else f"{FIG1_CLAIMS[q][1]}\n(not built)"
            for q, (_, r) in zip(order, rows.iterrows())]


def fig1(table: pd.DataFrame):
    """(Per sequence, a row.) Accuracy on task 1 and the running average accuracy after each task, mean ± s.e.
    over seeds; and the claims on that sequence: each paired difference of average accuracy after the last
    task with the interval its verdict is decided on, and the claimed threshold (dashed)."""
    curves = table[table["panel"] == "curve"] if "panel" in table else table
    claims = table[table["panel"] == "claim"] if "panel" in table else table.iloc[:0]
    sequences = sorted(set(curves.sequence))
    fig, axes = subplots(len(sequences), 3, width="text", height=0.9 + 1.6 * len(sequences), squeeze=False,
                         sharex="col", gridspec_kw={"width_ratios": [1, 1, 1.1]})
    order = [q for q in FIG1_CLAIMS if q in set(claims["metric"])]
    for row, sequence in enumerate(sequences):
        for col, (metric, label) in enumerate((("task1_acc", "accuracy on task 1"),
                                               ("running_avg", "average accuracy so far"))):
            ax = axes[row, col]
            part = curves[(curves.sequence == sequence) & (curves.metric == metric)]
            methods = [m for m in ORDER if m in set(part.method)] + sorted(set(part.method) - set(ORDER))
            for method in methods:
                g = part[part.method == method]
                style = dict(marker="*", ms=7, ls="none") if len(g) == 1 else dict(marker="o")
                ax.errorbar(g.after_task, g["mean"], yerr=se_err(g["mean"], g["se"], bounds=(0, 1)), color=COLORS(method),
                            label=LABELS.get(method, method), **style)
            if row == len(sequences) - 1:
                ax.set_xlabel("after task")
            ax.set_ylabel(label)
            ax.set_title(sequence)
        ax = axes[row, 2]
        if not order:
            not_built(ax, "no claim's metric in this build")
            continue
        ticks = _claims_panel(ax, claims[claims.sequence == sequence], order)
        ax.set_ylabel("claim: difference\nof average accuracy")
        ax.set_title(f"{sequence}: claims")
        if row == len(sequences) - 1:
            ax.set_xticks(np.arange(len(order)), ticks)
            why = no_interval_text(claims.rename(columns={"mean": "estimate", "n_seeds": "n"}), "seed")
            n = n_text(claims["n_seeds"], "seed") if claims["n_seeds"].notna().any() else ""
            claimed = sorted({relation_text(r) for _, r in claims.iterrows()} - {""})
            ax.set_xlabel(f"claimed: {', '.join(claimed)} (dashed);\npaired by seed, {n}" +
                          (f";\n{why}" if why else ""))
    panel_letters(axes.flat)
    legend(fig, where="below", ncol=4, title=f"(curves) mean ± s.e. over seeds, {n_text(curves.n_seeds, 'seed')}")
    return fig


#: The claim's quantity Fig. 2 draws: the spread of HIM's modulation per seed (its claim reads the blocks).
FIG2_QUANTITY = "modulation_sd"


def fig2_table(modulation: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2's rows. ``panel`` "histogram": share of elements per modulation bin, per (sequence, layer), pooled
    over the tasks after the first (of the first seed's M²LE run: no interval). ``panel`` "claim": per sequence,
    the spread of the modulation (:data:`FIG2_QUANTITY`, sd of m over a layer's elements, mean over layers and
    tasks, per seed) with the interval of the claim's rule (rows of ``claims``,
    :func:`repro.papers.m2le.experiment.claim_intervals`: the claim's own on the blocks, the same rule and no
    claim on the other sequences), ``estimate`` the mean over seeds and ``n`` the seeds."""
    later = modulation[modulation.task > 1]
    g = later.groupby(["sequence", "layer", "bin_low", "bin_high"], as_index=False)["count"].sum()
    g["share"] = g["count"] / g.groupby(["sequence", "layer"])["count"].transform("sum")
    alpha = later.groupby(["sequence"])["alpha"].mean().rename("alpha_mean")
    hist = g.merge(alpha, on="sequence").assign(panel="histogram")
    rows = _claim_rows(claims, [FIG2_QUANTITY])
    drawn = rows[["sequence", "estimate", "low", "high", "n", "interval", *CLAIM_FIELDS]].assign(panel="claim")
    return pd.concat([hist, drawn], ignore_index=True)


def fig2(table: pd.DataFrame):
    """Top: per sequence (rows) and adapted layer (columns), the distribution of HIM's modulation with P&M's
    scalar (mean over tasks) marked. Bottom: the spread of the modulation per sequence with the interval of
    its claim's rule, the claim's threshold dashed (filled: the claim; open: the same rule, no claim)."""
    hists = table[table["panel"] == "histogram"] if "panel" in table else table
    claims = table[table["panel"] == "claim"] if "panel" in table else table.iloc[:0]
    sequences = sorted(set(hists.sequence))
    layers = sorted(set(hists.layer))
    maps_height = 0.6 + 1.3 * len(sequences)
    claim_height = 1.5 if len(claims) else 0.0
    fig = new_figure("text", maps_height + claim_height)
    top, bottom = fig.subfigures(2, 1, height_ratios=[maps_height, max(claim_height, 1e-3)]) if len(claims) else \
        (fig, None)
    axes = top.subplots(len(sequences), len(layers), squeeze=False, sharex=True, sharey=True)
    shown = []
    for r, sequence in enumerate(sequences):
        for c, layer in enumerate(layers):
            ax = axes[r, c]
            g = hists[(hists.sequence == sequence) & (hists.layer == layer)]
            if g.empty and c > 0:  # this sequence's model has fewer layers: no panel
                ax.remove()
                continue
            shown.append(ax)
            ax.bar(g.bin_low, g.share, width=g.bin_high - g.bin_low, align="edge", color=COLORS("m2le"),
                   label="HIM modulation (M²LE)")
            if len(g):
                ax.axvline(g.alpha_mean.iloc[0], color=COLORS("pm"), ls="--", label="P&M scalar (mean)")
            ax.set_xlabel("modulation m")
            if c == 0:
                ax.set_ylabel(f"{sequence}:\nshare of elements")
            ax.set_title(f"layer {int(layer)}")
    legend(top, where="below", ncol=2)
    if bottom is not None:
        ax = bottom.subplots()
        claims = claims.sort_values("sequence")
        draw_claims(ax, claims, colors=COLORS("m2le"))
        ticks = [f"{s}\n({relation_text(r)}{', the claim' if isinstance(r['claim'], str) and r['claim'] else ''})"
                 for s, (_, r) in zip(claims["sequence"], claims.iterrows())]
        ax.set_xticks(np.arange(len(claims)), ticks)
        ax.set_ylabel("sd of m\n(per seed)")
        why = no_interval_text(claims, "seed")
        ax.set_xlabel(f"spread of the modulation, {n_text(claims['n'], 'seed')}" + (f";\n{why}" if why else ""))
        ax.set_title("claim: the modulation is far from uniform")
        shown.append(ax)
    panel_letters(shown)
    return fig
