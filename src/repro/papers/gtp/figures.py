"""gtp figures: Fig. 1 (return vs environment steps of online fine-tuning per control task), Fig. 2 (success vs goal distance),
Fig. 3 (score vs planning budget), and the method colours.

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV). The curves are means over seeds
with their 95% t interval (Fig. 1) or s.e. (Figs. 2-3): no claim reads one method's mean. The claims compare GTP
with a baseline paired by seed (the same dataset, models and starts): each figure draws, beside its curves, the
claims on its numbers as the checker compares them, GTP minus the baseline, with the interval each verdict is
decided on (:func:`claim_rows`: :func:`repro.claimtables.claim_table` on the aggregate's metrics, drawn by
:func:`repro.figures.claims.draw_claims`), never as two independent bars; none where too few seeds give one (the
panel says so). A strict claim (GTP above the baseline: dashed at 0) and its non-inferiority twin (GTP no more
than the margin below it: dashed at the margin's edge, the margin shaded) each take their own interval, side by
side in one slot. Fig. 1's claims: the offline return (round 0, and the offline-only tasks' one point) and the
return after the last online round; Fig. 2's: success in the farthest distance bucket; Fig. 3's: the score at
the smallest budget of the sweep and at the main budget.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.figures.claims import draw_claims, no_interval_text, relation_text, with_better
from repro.figures.style import (FLOOR, REFERENCE, Palette, interval_err, legend, mean_se, n_text, new_figure,
                                 not_built, not_built_figure, panel_letters, se_err, subplots)
from repro.stats.intervals import t_interval

__all__ = ["COLORS", "ORDER", "BASELINES", "claim_rows", "fig1_table", "fig1", "fig2_table", "fig2", "fig3_table",
           "fig3"]

COLORS = Palette("gtp", {"mppi": "#0072B2", "cem": "#009E73", "diffusion_policy": "#CC79A7", "td3bc": "#E69F00",
                         "oracle": REFERENCE, "expert": REFERENCE, "random": FLOOR}, ours="gtp")
ORDER = ("oracle", "expert", "gtp", "mppi", "cem", "diffusion_policy", "td3bc", "random")
#: The baselines a claim compares GTP with, in the order the claims panels draw them, and their slot labels.
BASELINES = {"mppi": "MPPI", "cem": "CEM", "diffusion_policy": "diffusion\npolicy", "td3bc": "TD3+BC"}
#: The columns a claim's row carries into a figure's table, beside the slot's keys.
CLAIM_FIELDS = ("claim", "level", "op", "threshold", "tol", "better", "interval", "status")
#: A strict claim and its non-inferiority twin share a slot: how far each sits from its centre, and how wide
#: each one's claimed relation is drawn.
TWIN_DODGE, TWIN_HALF_WIDTH = 0.2, 0.17


def claim_rows(claims: list, metrics: dict, match) -> pd.DataFrame:
    """The claims of ``claims`` (the paper's, :func:`repro.claims.load_claims`) that compare GTP with a baseline
    and that ``match(metric, baseline)`` selects, as the checker decides them on ``metrics`` (the aggregate's
    metrics.json): :func:`repro.claimtables.claim_table` (``estimate`` GTP minus the baseline, the mean over
    seeds of the paired difference; ``low``/``high`` the interval its verdict is decided on, NaN where it forms
    none), with ``better`` (which side the claim favours, for a non-inferiority claim's edge) and ``baseline``;
    a claim whose metric ``metrics`` lacks gives no row."""
    from repro.claimtables import claim_table

    chosen = [c for c in claims if isinstance(c.rhs, str) and c.metric.endswith(".gtp")
              and match(c.metric, c.rhs.rsplit(".", 1)[1])]
    rows = with_better(claim_table(chosen, metrics), chosen)
    return rows.assign(baseline=[str(r).rsplit(".", 1)[1] for r in rows["rhs"]])


def _claim_part(rows: pd.DataFrame, **keys) -> pd.DataFrame:
    """A figure table's rows (``panel`` "claim") of :func:`claim_rows`: ``method`` "gtp - <baseline>", ``mean`` the
    estimate, ``n_seeds`` its seeds, the slot's ``keys`` and the claim's fields."""
    out = pd.DataFrame({"panel": "claim", **{k: v for k, v in keys.items()},
                        "method": [f"gtp - {b}" for b in rows["baseline"]], "baseline": rows["baseline"],
                        "mean": rows["estimate"], "low": rows["low"], "high": rows["high"], "n_seeds": rows["n"],
                        **{c: rows[c] for c in CLAIM_FIELDS}}, index=rows.index)
    return out.reset_index(drop=True)


def _split(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A figure's table as (curves, claims)."""
    if "panel" not in table:
        return table, table.iloc[:0]
    return table[table["panel"] == "curve"], table[table["panel"] == "claim"]


def _draw_slots(ax, claims: pd.DataFrame, slots: list[tuple], ticks: list[str]) -> None:
    """Each slot (a key of ``slots``, matched on the claims' ``slot`` column) at x = 0, 1, ...: its strict claim
    left and its non-inferiority twin right (one alone in the middle), each with the interval its verdict is
    decided on and its claimed relation, in the baseline's colour."""
    for x, slot in enumerate(slots):
        part = claims[claims["slot"] == slot]
        strict, twin = part[part["op"] != "noninferior"], part[part["op"] == "noninferior"]
        for rows, dx in ((strict, -TWIN_DODGE if len(twin) else 0.0), (twin, TWIN_DODGE if len(strict) else 0.0)):
            if len(rows):
                draw_claims(ax, rows.rename(columns={"mean": "estimate"}), [x + dx] * len(rows),
                            colors=[COLORS(b) for b in rows["baseline"]], half_width=TWIN_HALF_WIDTH)
    ax.set_xlim(-0.6, len(slots) - 0.4)
    ax.set_xticks(np.arange(len(slots)), ticks)


def _claims_xlabel(ax, claims: pd.DataFrame) -> None:
    """The x label of a claims panel: the pairing and n of ``claims``, how a slot's twins read (or the claimed
    relation), and why no interval is drawn where the checker forms none."""
    why = no_interval_text(claims.rename(columns={"mean": "estimate", "n_seeds": "n"}), "seed")
    twins = claims["op"].eq("noninferior").any()
    lines = [f"paired by seed, {n_text(claims['n_seeds'], 'seed')}",
             "left: GTP above the baseline,\nright: non-inferior (margin shaded)" if twins else
             f"claimed: {', '.join(sorted({relation_text(r) for _, r in claims.iterrows()}))}", why]
    ax.set_xlabel(";\n".join(line for line in lines if line))


def _ordered(methods) -> list[str]:
    return [m for m in ORDER if m in set(methods)] + sorted(set(methods) - set(ORDER))


def _mean_se(tidy: pd.DataFrame, keys: list[str], col: str) -> pd.DataFrame:
    """Mean and s.e. over seeds of each seed's mean of ``col`` per ``keys``."""
    return mean_se(tidy.groupby(keys + ["seed"])[col].mean().reset_index(), keys, col)


LEARNERS = ("gtp", "mppi", "cem", "diffusion_policy", "td3bc")  # the methods that fine-tune online
#: Fig. 1's claims per phase: the return the claim reads (metrics.json's path, per task) -> the phase's label.
FIG1_PHASES = {"control": "offline", "online": "last round"}


def fig1_table(tidy: pd.DataFrame, claims: list | None = None, metrics: dict | None = None) -> pd.DataFrame:
    """Fig. 1's rows. ``panel`` "curve": mean and 95% Student-t interval over seeds of the evaluation return per
    (task, method, round), at its cumulative environment steps (round 0: offline only); ``online_summary.csv``
    in, one row per point. ``panel`` "claim" (with ``claims`` and ``metrics``): per task, each claim on GTP's
    offline return (``phase`` "offline": round 0) or its return after the last online round (``phase`` "last
    round") against a baseline, :func:`claim_rows` (``mean`` GTP minus the baseline, paired by seed, with the
    interval its verdict is decided on), at the phase's ``round`` and ``env_steps``."""
    rows = []
    for (task, method, rnd), g in tidy.groupby(["task", "method", "round"]):
        iv = t_interval(g.ret.values)
        rows.append({"task": task, "method": method, "round": int(rnd), "env_steps": int(g.env_steps.max()),
                     "mean": iv.estimate, "low": iv.low, "high": iv.high, "n_seeds": iv.n})
    curves = pd.DataFrame(rows, columns=["task", "method", "round", "env_steps", "mean", "low", "high", "n_seeds"])
    if claims is None:
        return curves
    parts = [curves.assign(panel="curve")]
    for task in sorted(set(curves.task)):
        at = curves[curves.task == task]
        for block, phase in FIG1_PHASES.items():
            found = claim_rows(claims, metrics, lambda metric, _b, block=block, task=task:
                               metric.startswith(f"{block}.{task}."))
            last = at[at["round"] == at["round"].max()] if block == "online" else at[at["round"] == 0]
            if len(found) and len(last):
                parts.append(_claim_part(found, task=task, phase=phase, round=int(last["round"].iloc[0]),
                                         env_steps=int(last["env_steps"].max())))
    return pd.concat(parts, ignore_index=True)


def fig1(table: pd.DataFrame):
    """Return vs environment steps per task: the learners' curves (mean and 95% t interval over seeds: a band,
    or a bar at a task's lone offline point), the non-learners (scripted expert, random) as dashed levels.
    Beneath, one panel per task: each claim on GTP's offline return and on its return after the last round,
    GTP minus the baseline paired by seed, with the interval its verdict is decided on."""
    curves, claims = _split(table)
    tasks = sorted(curves.task.unique())
    if not tasks:
        return not_built_figure("no online phase in this preset", title="online fine-tuning")
    curves_height, claims_height = 2.4, 1.3 * len(tasks) + 0.6
    fig = new_figure("text", curves_height + (claims_height if len(claims) else 0.0))
    top, bottom = fig.subfigures(2, 1, height_ratios=[curves_height, claims_height]) if len(claims) else (fig, None)
    axes = top.subplots(1, len(tasks), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        t = curves[curves.task == task]
        for m in _ordered(t.method):
            part = t[t.method == m].sort_values("env_steps")
            if m in LEARNERS:
                ax.plot(part.env_steps, part["mean"], color=COLORS(m), marker="o", label=m)
                if len(part) > 1:
                    ax.fill_between(part.env_steps, part.low, part.high, color=COLORS(m), alpha=0.15, lw=0)
                else:  # a task without online rounds: one point, whose interval a band cannot show
                    ax.errorbar(part.env_steps, part["mean"], yerr=interval_err(part["mean"], part.low, part.high),
                                color=COLORS(m), ls="none")
            else:
                ax.axhline(float(part["mean"].iloc[0]), color=COLORS(m), ls="--" if m != "random" else ":", lw=0.8,
                           label=m)
        ax.set_title(task)
        ax.set_xlabel("environment steps\n(online)")
    axes[0][0].set_ylabel("return (mean, 95% CI over seeds)")
    shown = list(axes[0])
    legend(top, where="below", ncol=7,
           title=f"(curves) mean and 95% t interval over seeds, {n_text(curves.n_seeds, 'seed')}")
    if bottom is not None:
        claim_axes = bottom.subplots(len(tasks), 1, squeeze=False)[:, 0]
        for i, (ax, task) in enumerate(zip(claim_axes, tasks)):
            part = claims[claims.task == task]
            if part.empty:
                not_built(ax, f"no claim reads {task}'s returns")
                shown.append(ax)
                continue
            slots = [(phase, b) for phase in FIG1_PHASES.values() for b in BASELINES
                     if ((part.phase == phase) & (part.baseline == b)).any()]
            part = part.assign(slot=list(zip(part.phase, part.baseline)))
            _draw_slots(ax, part, slots, [f"{BASELINES[b]}\n{phase}" for phase, b in slots])
            if i == len(tasks) - 1:  # the seeds are every task's: said once, under the last panel
                _claims_xlabel(ax, claims)
            ax.set_ylabel(f"{task}:\nGTP − baseline\n(return)")
            ax.set_title(f"{task}: claims")
            shown.append(ax)
    panel_letters(shown)
    return fig


def fig2_table(tidy: pd.DataFrame, main_n: int, claims: list | None = None, metrics: dict | None = None
               ) -> pd.DataFrame:
    """Mean and s.e. over seeds of the success rate per (method, distance bucket) at the main budget; with
    ``claims`` and ``metrics`` (``panel`` "claim"), each claim on the success in the farthest bucket, GTP minus
    the baseline paired by seed with the interval its verdict is decided on (:func:`claim_rows`)."""
    t = _mean_se(tidy[tidy.n_samples == main_n], ["method", "bucket", "dist_lo", "dist_hi"], "success")
    curves = t.assign(distance=(t.dist_lo + t.dist_hi) / 2)
    if claims is None:
        return curves
    found = claim_rows(claims, metrics, lambda metric, _b: metric == "far_success.gtp")
    far = curves[curves.bucket == curves.bucket.max()]
    part = _claim_part(found, bucket=far.bucket.max(), dist_lo=far.dist_lo.max(), dist_hi=far.dist_hi.max(),
                       distance=far.distance.max())
    return pd.concat([curves.assign(panel="curve"), part], ignore_index=True)


def _side_claims(ax, claims: pd.DataFrame, slots: list[tuple], ticks: list[str], what: str) -> None:
    if claims.empty:
        not_built(ax, "no claim reads these numbers in this build")
        return
    _draw_slots(ax, claims, slots, ticks)
    _claims_xlabel(ax, claims)
    ax.set_ylabel(what)
    ax.set_title("claims")


def fig2(table: pd.DataFrame):
    """(a) Success rate against the optimal steps to the goal, mean ± s.e. over seeds; (b) the claims on the
    farthest bucket: GTP minus the baseline, paired by seed, with the interval each verdict is decided on."""
    curves, claims = _split(table)
    fig, (ax, cx) = subplots(1, 2, width="text", height=2.9, gridspec_kw={"width_ratios": [1.8, 1]})
    for m in _ordered(curves.method):
        part = curves[curves.method == m].sort_values("distance")
        ax.errorbar(part.distance, part["mean"], yerr=se_err(part["mean"], part.se, bounds=(0, 1)), color=COLORS(m),
                    marker="o", label=m)
    ax.set_xlabel("optimal steps to the goal\n(bucket centre)")
    ax.set_ylabel("success rate")
    ax.set_title("maze: success by distance")
    ax.set_ylim(-0.02, 1.05)
    claims = claims.assign(slot=list(zip(claims["baseline"]))) if len(claims) else claims
    slots = [(b,) for b in BASELINES if len(claims) and (claims["baseline"] == b).any()]
    _side_claims(cx, claims, slots, [f"{BASELINES[b]},\nfarthest" for (b,) in slots],
                 "GTP − baseline\n(success rate)")
    panel_letters([ax, cx])
    legend(fig, where="below", ncol=4, title=f"(a) mean ± s.e. over seeds, {n_text(curves.n_seeds, 'seed')}")
    return fig


def fig3_table(tidy: pd.DataFrame, main_n: int, claims: list | None = None, metrics: dict | None = None
               ) -> pd.DataFrame:
    """Mean and s.e. over seeds of the score per (planner, candidates per iteration), with model evaluations; with
    ``claims`` and ``metrics`` (``panel`` "claim"), each claim on a planner's score at the smallest budget of the
    sweep (``low_budget``) or at the main budget (``score``) against another planner, GTP minus it paired by
    seed with the interval its verdict is decided on (:func:`claim_rows`), at its ``n_samples``."""
    planners = tidy[tidy.method.isin(["gtp", "mppi", "cem"])]
    t = _mean_se(planners, ["method", "n_samples"], "score")
    evals = planners.groupby(["method", "n_samples"]).evals.mean().rename("model_evals_per_decision")
    curves = t.merge(evals.reset_index(), on=["method", "n_samples"])
    if claims is None:
        return curves
    shown = set(curves.method) - {"gtp"}
    parts = [curves.assign(panel="curve")]
    for metric, n in (("low_budget.gtp", int(curves.n_samples.min())), ("score.gtp", int(main_n))):
        found = claim_rows(claims, metrics, lambda m, b, metric=metric: m == metric and b in shown)
        at = curves[(curves.n_samples == n) & (curves.method == "gtp")]
        parts.append(_claim_part(found, n_samples=n, model_evals_per_decision=at.model_evals_per_decision.max()))
    return pd.concat(parts, ignore_index=True)


def fig3(table: pd.DataFrame):
    """(a) Score against planning compute per planner, mean ± s.e. over seeds; (b) the claims on it: GTP minus
    MPPI (and CEM) at the smallest budget of the sweep and at the main budget, paired by seed, with the interval
    each verdict is decided on."""
    curves, claims = _split(table)
    fig, (ax, cx) = subplots(1, 2, width="text", height=2.9, gridspec_kw={"width_ratios": [1.5, 1]})
    for m in _ordered(curves.method):
        part = curves[curves.method == m].sort_values("n_samples")
        ax.errorbar(part.model_evals_per_decision, part["mean"], yerr=part.se, color=COLORS(m), marker="o", label=m)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("model evaluations per decision")
    ax.set_ylabel("return / optimal return")
    ax.set_title("maze: score by planning compute")
    claims = claims.assign(slot=list(zip(claims["n_samples"], claims["baseline"]))) if len(claims) else claims
    slots = list(dict.fromkeys(sorted(claims["slot"], key=lambda s: (s[0], list(BASELINES).index(s[1]))))) \
        if len(claims) else []
    evals = dict(zip(claims["n_samples"], claims["model_evals_per_decision"])) if len(claims) else {}
    _side_claims(cx, claims, slots, [f"{BASELINES[b]},\n{evals[n]:g} evals" for n, b in slots],
                 "GTP − baseline\n(return / optimal)")
    panel_letters([ax, cx])
    legend(fig, where="below", ncol=3, title=f"(a) mean ± s.e. over seeds, {n_text(curves.n_seeds, 'seed')}")
    return fig
