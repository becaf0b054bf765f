"""gtp figures: Fig. 1 (return vs environment steps of online fine-tuning per control task), Fig. 2 (success vs goal distance),
Fig. 3 (score vs planning budget), and the method colours.

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import pandas as pd

from repro.figures.style import (FLOOR, REFERENCE, Palette, interval_err, legend, mean_se, n_text, not_built_figure,
                                 panel_letters, se_err, subplots)
from repro.stats.intervals import t_interval

__all__ = ["COLORS", "ORDER", "fig1_table", "fig1", "fig2_table", "fig2", "fig3_table", "fig3"]

COLORS = Palette("gtp", {"mppi": "#0072B2", "cem": "#009E73", "diffusion_policy": "#CC79A7", "td3bc": "#E69F00",
                         "oracle": REFERENCE, "expert": REFERENCE, "random": FLOOR}, ours="gtp")
ORDER = ("oracle", "expert", "gtp", "mppi", "cem", "diffusion_policy", "td3bc", "random")


def _ordered(methods) -> list[str]:
    return [m for m in ORDER if m in set(methods)] + sorted(set(methods) - set(ORDER))


def _mean_se(tidy: pd.DataFrame, keys: list[str], col: str) -> pd.DataFrame:
    """Mean and s.e. over seeds of each seed's mean of ``col`` per ``keys``."""
    return mean_se(tidy.groupby(keys + ["seed"])[col].mean().reset_index(), keys, col)


LEARNERS = ("gtp", "mppi", "cem", "diffusion_policy", "td3bc")  # the methods that fine-tune online


def fig1_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95% Student-t interval over seeds of the evaluation return per (task, method, round), at its
    cumulative environment steps (round 0: offline only); ``online_summary.csv`` in, one row per point."""
    rows = []
    for (task, method, rnd), g in tidy.groupby(["task", "method", "round"]):
        iv = t_interval(g.ret.values)
        rows.append({"task": task, "method": method, "round": int(rnd), "env_steps": int(g.env_steps.max()),
                     "mean": iv.estimate, "low": iv.low, "high": iv.high, "n_seeds": iv.n})
    return pd.DataFrame(rows, columns=["task", "method", "round", "env_steps", "mean", "low", "high", "n_seeds"])


def fig1(table: pd.DataFrame):
    """Return vs environment steps per task: the learners' curves (mean and 95% t interval over seeds: a band,
    or a bar at a task's lone offline point), the non-learners (scripted expert, random) as dashed levels."""
    tasks = sorted(table.task.unique())
    if not tasks:
        return not_built_figure("no online phase in this preset", title="online fine-tuning")
    fig, axes = subplots(1, len(tasks), width="text", height=2.3, squeeze=False)
    for ax, task in zip(axes[0], tasks):
        t = table[table.task == task]
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
        ax.set_xlabel("environment steps (online)")
    axes[0][0].set_ylabel("return (mean, 95% CI over seeds)")
    panel_letters(axes[0])
    legend(fig, where="below", ncol=7, title=f"mean and 95% t interval over seeds, {n_text(table.n_seeds, 'seed')}")
    return fig


def fig2_table(tidy: pd.DataFrame, main_n: int) -> pd.DataFrame:
    """Mean and s.e. over seeds of the success rate per (method, distance bucket) at the main budget."""
    t = _mean_se(tidy[tidy.n_samples == main_n], ["method", "bucket", "dist_lo", "dist_hi"], "success")
    return t.assign(distance=(t.dist_lo + t.dist_hi) / 2)


def fig2(table: pd.DataFrame):
    fig, ax = subplots(width="column", height=2.8)
    for m in _ordered(table.method):
        part = table[table.method == m].sort_values("distance")
        ax.errorbar(part.distance, part["mean"], yerr=se_err(part["mean"], part.se, bounds=(0, 1)), color=COLORS(m),
                    marker="o", label=m)
    ax.set_xlabel("optimal steps to the goal\n(bucket centre)")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.05)
    legend(fig, where="below", ncol=3, title=f"mean ± s.e. over seeds, {n_text(table.n_seeds, 'seed')}")
    return fig


def fig3_table(tidy: pd.DataFrame, main_n: int) -> pd.DataFrame:
    """Mean and s.e. over seeds of the score per (planner, candidates per iteration), with model evaluations."""
    planners = tidy[tidy.method.isin(["gtp", "mppi", "cem"])]
    t = _mean_se(planners, ["method", "n_samples"], "score")
    evals = planners.groupby(["method", "n_samples"]).evals.mean().rename("model_evals_per_decision")
    return t.merge(evals.reset_index(), on=["method", "n_samples"])


def fig3(table: pd.DataFrame):
    fig, ax = subplots(width="column", height=2.6)
    for m in _ordered(table.method):
        part = table[table.method == m].sort_values("n_samples")
        ax.errorbar(part.model_evals_per_decision, part["mean"], yerr=part.se, color=COLORS(m), marker="o", label=m)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("model evaluations per decision")
    ax.set_ylabel("return / optimal return")
    legend(fig, where="below", ncol=3, title=f"mean ± s.e. over seeds, {n_text(table.n_seeds, 'seed')}")
    return fig
