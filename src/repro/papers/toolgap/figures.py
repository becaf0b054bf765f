"""toolgap's figures and table.

Fig. 1: mismatch rate per model and task, stacked into missed calls (necessary, not called) and
over-calls (unnecessary, called), the total with the interval its claim is decided on and the claim's
threshold, the call-rate floor marked on each bar; beneath, the floor claim's quantity per model, the
mismatch minus the call-rate floor paired by item, with its interval. Fig. 2: test accuracy of the
cognition and action probes at the last prompt token by relative depth, and the cosine between their
directions; beneath, the claims on them: each probe's test correctness minus the majority class's, per
model and task, paired by item, and the late layers' |cosine| against its threshold and its permuted-probe
floor. Table 1: the mismatch decomposition into cognition errors and cognition-to-action errors.

Every claim's quantity is drawn with the interval its verdict is decided on (the checker's own, from the
aggregate's :func:`repro.claimtables.claim_table`) by :func:`repro.figures.claims.draw_claims`; a claim with
too few units for its level has none, and its panel says so.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from repro.figures.claims import draw_claims, no_interval_text, relation_text
from repro.figures.style import (FLOOR, Palette, categorical, legend, mark_missing, n_text, new_figure, not_built,
                                 panel_letters, subplots)

__all__ = ["COLORS", "FIG1_CLAIMS", "FIG2_CLAIMS", "fig1_table", "fig1", "fig2_table", "fig2", "table1"]

#: The two directions of a mismatch and the two probes (toolgap measures models; no colour means "ours").
#: Models are told apart by :func:`repro.figures.style.categorical` colours, in the order they appear.
COLORS = Palette("toolgap", {"missed_call": "#E69F00", "over_call": "#0072B2", "cognition": "#009E73",
                             "action": "#CC79A7", "call_rate_floor": FLOOR})
PROBE_STYLES = {"cognition": ("-", "o"), "action": ("--", "s")}
#: Fig. 1's claims, by id -> the ``direction`` its rows take: the mismatch rate itself (the stack's total) and
#: the mismatch beyond what the model's call rate alone forces (a paired difference per item).
FIG1_CLAIMS = {"mismatch_substantial_every_model": "mismatch",
               "mismatch_beyond_call_rate_every_model": "beyond_call_rate_floor"}
#: Fig. 2's claims, by id -> the slot's label: the probes' decodability (one setting per model and task) and
#: the late layers' cosine (one estimate over the model x task pairs).
FIG2_CLAIMS = {"cognition_linearly_decodable": "cognition probe\n− majority class",
               "action_linearly_decodable": "action probe\n− majority class",
               "directions_near_orthogonal_late": "late\n|cos|",
               "directions_orthogonal_beyond_permuted_probes": "minus\npermuted\nprobes'"}
#: Fig. 1's table: one row per drawn element; the claim's columns are NaN on the stacked parts and the floor.
FIG1_COLUMNS = ["model", "task", "direction", "rate", "n", "low", "high", "level", "op", "threshold", "tol", "interval",
                "claim", "status"]


def _setting_rows(claims: pd.DataFrame, cid: str) -> pd.DataFrame:
    """The rows of an ``each`` claim ``cid`` of ``claims`` (the aggregate's claim table), with ``model`` and
    ``task`` split from the setting (``<model>__<task>``)."""
    rows = claims[claims["claim"] == cid]
    parts = rows["setting"].astype(str).str.split("__", n=1, expand=True)
    return rows.assign(model=parts[0], task=parts[1]) if len(rows) else rows.assign(model=[], task=[])


def fig1_table(table: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """Tidy rows (model, task, direction, rate, n, ...) from the aggregate's per-(model, task) table and its
    claim table ``claims`` (:func:`repro.claimtables.claim_table`).

    ``direction`` ``missed_call`` and ``over_call``: the two parts of the stack (not a claim's quantity, no
    interval); ``call_rate_floor``: the least mismatch a caller with the model's own call share can make,
    |necessity share - call share| (the floor claim's right-hand side, no interval). ``mismatch``: their
    total, the rate the mismatch claim judges; ``beyond_call_rate_floor``: the mismatch minus the floor, the
    mean over items of the paired difference the floor claim judges; each with the interval its verdict is
    decided on, at its ``level``, its claimed relation (``op``, ``threshold``, ``tol``), kind (``interval``)
    and the setting's verdict. A pair the claim table lacks keeps its rate without an interval.
    """
    rows = []
    checked = {(cid, r["model"], r["task"]): r for cid in FIG1_CLAIMS
               for r in _setting_rows(claims, cid).to_dict("records")}
    for r in table.to_dict("records"):
        for direction in ("missed_call", "over_call"):
            rows.append({"model": r["model"], "task": r["task"], "direction": direction, "rate": r[direction] / r["n"],
                         "n": r["n"]})
        floor = abs(r["necessary"] - r["called"]) / r["n"]
        rows.append({"model": r["model"], "task": r["task"], "direction": "call_rate_floor", "rate": floor, "n": r["n"]})
        for cid, direction in FIG1_CLAIMS.items():
            c = checked.get((cid, r["model"], r["task"]))
            rate = r["mismatch_rate"] if direction == "mismatch" else np.nan if c is None else c["estimate"]
            rows.append({"model": r["model"], "task": r["task"], "direction": direction, "rate": rate, "n": r["n"],
                         **({k: c[k] for k in ("low", "high", "level", "op", "threshold", "tol", "interval", "claim",
                                               "status")} if c is not None else {})})
    return pd.DataFrame(rows, columns=FIG1_COLUMNS)


def _model_ticks(ax, models: list[str]) -> None:
    ax.set_xticks(np.arange(len(models)), models, rotation=30, ha="right", rotation_mode="anchor")


def fig1(tidy: pd.DataFrame) -> plt.Figure:
    """Top: per task, stacked bars per model, the call-rate floor (grey tick), the total's claim interval and
    the claim's threshold; a missing rate is left out (no bar, "n/a" in its place), never drawn as 0.
    Bottom: per task, the floor claim's quantity per model (mismatch minus the call-rate floor, paired by item)
    with the interval its verdict is decided on and the claimed relation."""
    tasks = list(dict.fromkeys(tidy.task))
    models = list(dict.fromkeys(tidy.model))
    fig, axes = subplots(2, len(tasks), width="text", height=4.6, squeeze=False, sharey="row",
                         gridspec_kw={"height_ratios": [1.25, 1]})
    x = np.arange(len(models))
    for ax, task in zip(axes[0], tasks):
        bottom = np.zeros(len(models))
        for direction, label in (("missed_call", "necessary, not called"), ("over_call", "unnecessary, called")):
            sub = tidy[(tidy.task == task) & (tidy.direction == direction)].set_index("model").reindex(models)
            vals = sub.rate.to_numpy(dtype=float)
            ax.bar(x, vals, bottom=bottom, color=COLORS(direction), label=label, width=0.7)
            bottom = bottom + vals
        floor = tidy[(tidy.task == task) & (tidy.direction == "call_rate_floor")].set_index("model").reindex(models)
        ax.hlines(floor.rate, x - 0.35, x + 0.35, colors=COLORS("call_rate_floor"), lw=1.6, zorder=2.5,
                  label="call-rate floor |p − c|")
        total = tidy[(tidy.task == task) & (tidy.direction == "mismatch")].set_index("model").reindex(models)
        shown = total.rate.notna().to_numpy()
        if shown.any():  # the total's interval and the claim's threshold, beside each bar
            draw_claims(ax, total[shown].reset_index().rename(columns={"rate": "estimate"}), x[shown],
                        half_width=0.45)
        mark_missing(ax, x[np.isnan(bottom)], 0.02)  # an empty slot would read as a rate of 0
        ax.set_xlim(-0.6, len(models) - 0.4)  # every model's slot, with a bar or not
        _model_ticks(ax, models)
        counts = tidy[tidy.task == task].n.dropna()
        ax.set_title(f"{task} ({n_text(counts, 'item')})" if len(counts) else task)
        ax.set_ylim(0, 1)
    claimed = tidy[tidy.direction == "mismatch"]
    relation = sorted({relation_text(r) for _, r in claimed.iterrows() if isinstance(r["op"], str)})
    axes[0][0].set_ylabel("mismatch rate" + (f"\n(claim: {', '.join(relation)}, dashed)" if relation else ""))
    for ax, task in zip(axes[1], tasks):
        beyond = tidy[(tidy.task == task) & (tidy.direction == "beyond_call_rate_floor")].set_index("model") \
            .reindex(models).reset_index()
        if beyond["claim"].isna().all():
            not_built(ax, "the floor claim checks no model on this task")
            continue
        rows = beyond.rename(columns={"rate": "estimate"})
        draw_claims(ax, rows, x)
        ax.set_xlim(-0.6, len(models) - 0.4)
        _model_ticks(ax, models)
        why = no_interval_text(rows, "item")
        ax.set_title(f"{task}: beyond the floor\n(claim: {relation_text(rows.dropna(subset=['op']).iloc[0])})")
        if why:
            ax.set_xlabel(why)
    axes[1][0].set_ylabel("claim: mismatch −\ncall-rate floor,\npaired by item")
    panel_letters(axes.flat)
    handles, labels = axes[0][0].get_legend_handles_labels()
    handles.append(Line2D([], [], color="black", marker="o", ms=4, ls="none"))
    labels.append("claim's estimate, its interval\nand threshold (dashed)")
    legend(fig, where="right", handles=handles, labels=labels)
    return fig


def fig2_table(layers: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2's rows. ``panel`` "layer": the aggregate's per-layer table as it is (probe test accuracy and its
    majority class per layer, the cosine of the two probes). ``panel`` "claim": the claims of
    :data:`FIG2_CLAIMS` (rows of ``claims``, the aggregate's :func:`repro.claimtables.claim_table`): per model
    and task (``setting``), each probe's test correctness minus the majority class's at the claims' layer,
    paired by item; and the late layers' mean |cosine| over the model x task pairs, against 0.2 and minus the
    permuted probes'; ``estimate``, ``low``/``high`` the interval its verdict is decided on (NaN: none)."""
    rows = claims[claims["claim"].isin(list(FIG2_CLAIMS))].copy()
    rows["claim"] = pd.Categorical(rows["claim"], list(FIG2_CLAIMS))
    rows = rows.sort_values("claim", kind="stable").assign(claim=lambda r: r["claim"].astype(str))
    return pd.concat([layers.assign(panel="layer"), rows.assign(panel="claim")], ignore_index=True)


def _decodable_panel(ax, rows: pd.DataFrame, colours: dict[str, str]) -> None:
    rows = _setting_rows(rows, rows["claim"].iloc[0]).reset_index(drop=True)
    draw_claims(ax, rows, colors=[colours.get(m, FLOOR) for m in rows["model"]])
    ax.set_xticks(np.arange(len(rows)), [f"{m}, {t}" for m, t in zip(rows["model"], rows["task"])], rotation=90)
    why = no_interval_text(rows, "item")
    ax.set_xlabel(f"paired by item ({relation_text(rows.iloc[0])}), {n_text(rows['n'], 'item')}" +
                  (f";\n{why}" if why else ""))


def fig2(table: pd.DataFrame) -> plt.Figure:
    """Rows: tasks; columns: probe accuracy (cognition solid, action dashed), cosine; one colour per model.
    Bottom row: the claims on them with the intervals their verdicts are decided on: each probe's test
    correctness minus the majority class's per model and task, and the late layers' |cosine|.

    A probe whose labels are all equal is not trained (its accuracy and cosine are NaN): a panel with
    no trained probe for any model says so, and its claim has no setting for that pair.
    """
    layers = table[table["panel"] == "layer"] if "panel" in table else table
    claims = table[table["panel"] == "claim"] if "panel" in table else table.iloc[:0]
    tasks = list(dict.fromkeys(layers.task))
    models = list(dict.fromkeys(layers.model))
    colours = categorical(models)
    curves_height = 0.6 + 1.8 * len(tasks)
    claims_height = 2.8
    fig = new_figure("text", curves_height + claims_height)
    top, bottom = fig.subfigures(2, 1, height_ratios=[curves_height, claims_height])
    axes = top.subplots(len(tasks), 2, sharex=True, squeeze=False)
    for row, task in zip(axes, tasks):
        part = layers[layers.task == task]
        for model in models:
            sub = part[part.model == model].sort_values("depth")
            for probe, (ls, marker) in PROBE_STYLES.items():
                row[0].plot(sub.depth, sub[f"{probe}_accuracy"], ls=ls, marker=marker, ms=2.5, color=colours[model])
            row[1].plot(sub.depth, sub.cosine, "-o", ms=2.5, color=colours[model])
        row[0].set_ylabel(f"{task}\nprobe test accuracy")
        row[0].set_ylim(0, 1.02)
        row[1].axhline(0, color="0.6", lw=0.8)
        row[1].set_ylabel("cosine(cognition, action)")
        row[1].set_ylim(-1, 1)
        if part[["cognition_accuracy", "action_accuracy"]].isna().all().all():
            not_built(row[0], "no probe trained (every item has the same label)")
        if part.cosine.isna().all():
            not_built(row[1], "no cosine: no model has both probes trained (one of them saw a single label)")
    for ax in axes[-1]:
        ax.set_xlabel("relative depth (layer / layers)")
    handles = [Line2D([], [], color=colours[m]) for m in models]
    handles += [Line2D([], [], color="0.3", ls=ls, marker=marker, ms=2.5) for ls, marker in PROBE_STYLES.values()]
    legend(top, where="below", handles=handles, labels=[*models, *(f"{p} probe" for p in PROBE_STYLES)], ncol=5)
    claim_axes = bottom.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 0.8]})
    for ax, cid in zip(claim_axes[:2], FIG2_CLAIMS):
        rows = claims[claims["claim"] == cid]
        ax.set_title(FIG2_CLAIMS[cid])
        if rows.empty:
            not_built(ax, "no model has this probe trained")
            continue
        _decodable_panel(ax, rows, colours)
    claim_axes[0].set_ylabel("claim: difference\nof test accuracy")
    ax = claim_axes[2]
    cosine = claims[claims["claim"].isin(list(FIG2_CLAIMS)[2:])].reset_index(drop=True)
    ax.set_title("late layers' |cosine|")
    if cosine.empty:
        not_built(ax, "no model has both probes trained")
    else:
        draw_claims(ax, cosine)
        ax.set_xticks(np.arange(len(cosine)), [f"{FIG2_CLAIMS[c]}\n({relation_text(r, short=True)})"
                                              for c, (_, r) in zip(cosine["claim"], cosine.iterrows())])
        why = no_interval_text(cosine, "pair")
        ax.set_xlabel(f"over model x task\npairs, {n_text(cosine['n'], 'pair')}" + (f";\n{why}" if why else ""))
    panel_letters([*axes.flat, *claim_axes])
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    """Per model and task: items, mismatch rate and its directions, and the decomposition."""
    out = table[["model", "task", "n", "necessary", "called", "mismatch_rate", "missed_call", "over_call",
                 "cognition_to_action", "cognition", "undecided", "c2a_share", "probe_cross_fit"]].copy()
    return out.rename(columns={"c2a_share": "cognition_to_action_share"})
