"""grokcap's figures and table: one builder per figure, each from the tidy table it plots.

Fig. 1: T_mem(P) and T_gen(P) against parameters (log-log), the censored power-law fits, their
crossing and the grokking threshold. Fig. 2: accuracy curves on the modular task for widths below,
at and above the crossing. Fig. 3: the capacity estimate, bits memorised on random labels against
parameters. Table 1: per width, P and the timescales; then the fits, crossing, threshold, capacity.

``figN_table`` builds the tidy DataFrame that ``figN`` plots (it is written as the CSV beside the
PDF); ``table1`` builds Table 1 from ``metrics.json``.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter
import numpy as np
import pandas as pd

from repro.figures.style import Palette, legend, n_text, not_built, panel_letters, subplots
from repro.missing import is_missing
from repro.tables import MISSING

__all__ = ["COLORS", "fig1_table", "fig1", "pick_widths", "fig2_table", "fig2", "fig3_table", "fig3", "table1"]

#: grokcap's series: the two timescales of Fig. 1, the two accuracies of Fig. 2, the capacity runs of Fig. 3
#: (grokcap measures; it proposes no method, so no name takes the colour of "ours").
COLORS = Palette("grokcap", {"t_mem": "#0072B2", "t_gen": "#009E73", "train": "#0072B2", "validation": "#E69F00",
                             "capacity": "#CC79A7", "paper": "#666666"})


# ----------------------------------------------------------------------------------------------
# Fig. 1: T_mem(P) and T_gen(P) against parameters (log-log), fits, crossing, threshold
# ----------------------------------------------------------------------------------------------

#: Fig. 1's series: name -> (task, time column, legend label).
FIG1_SERIES = {"t_mem": ("random", "t_train", "T_mem (random labels, 99% train)"),
               "t_gen": ("modular", "t_val", "T_gen (modular task, 99% validation)")}


#: Censored runs are open triangles, one direction per series (they often sit on the same step cap).
CENSORED_MARKERS = {"t_mem": "^", "t_gen": "v"}


def fig1_table(runs: pd.DataFrame, metrics: dict) -> pd.DataFrame:
    """Tidy rows: per-seed times (censored runs at their cap, flagged) and the fitted power laws."""
    rows = []
    for name, (task, col, _) in FIG1_SERIES.items():
        sub = runs[runs.task == task]
        for r in sub.itertuples(index=False):
            t = getattr(r, col)
            cens = bool(np.isnan(t))
            rows.append({"series": name, "kind": "run", "width": r.width, "seed": r.seed, "P": r.P,
                         "T": float(r.cap if cens else t), "censored": cens})
        fit = (metrics.get("power_law") or {}).get(name) or {}
        if len(sub) and fit.get("a") is not None and fit.get("b") is not None:
            for P in np.geomspace(sub.P.min(), sub.P.max(), 30):
                rows.append({"series": name, "kind": "fit", "width": -1, "seed": -1, "P": float(P),
                             "T": float(fit["a"] * P ** fit["b"]), "censored": False})
    return pd.DataFrame(rows, columns=["series", "kind", "width", "seed", "P", "T", "censored"])


def fig1(df: pd.DataFrame, metrics: dict) -> plt.Figure:
    """Fig. 1 from :func:`fig1_table`: T_mem(P) and T_gen(P), log-log, fits, crossings, threshold."""
    fig, ax = subplots(width="text", height=2.6)
    for name, (_, _, label) in FIG1_SERIES.items():
        color = COLORS(name)
        runs = df[(df.series == name) & (df.kind == "run")]
        if len(runs):
            # mean ± sd over the seeds that reached 99% (a lone seed has no sd); drawn even when none did, so
            # the figure says it draws error bars wherever runs finish (lint.uncertainty: missing here)
            done = runs[~runs.censored.astype(bool)]
            stats = done.groupby("P").T.agg(["mean", "std", "count"]).reset_index()
            ax.errorbar(stats.P.to_numpy(float), stats["mean"].to_numpy(float),
                        yerr=stats["std"].to_numpy(float), color=color, marker="o",
                        label=f"{label},\nmean ± sd, {n_text(stats['count'], 'seed')}" if len(done) else None)
            cens = runs[runs.censored.astype(bool)]
            ax.scatter(cens.P.to_numpy(float), cens["T"].to_numpy(float), facecolors="none", edgecolors=color,
                       marker=CENSORED_MARKERS[name],
                       label=f"{name}: censored at step cap" if len(cens) else None)
        fit = (metrics.get("power_law") or {}).get(name) or {}
        line = df[(df.series == name) & (df.kind == "fit")]
        if len(line):
            interval = f" [{fit['b_lo']:.2f}, {fit['b_hi']:.2f}]" if fit.get("b_lo") is not None else ""
            ax.plot(line.P.to_numpy(float), line["T"].to_numpy(float), color=color, ls="--", lw=1,
                    label=f"{name} fit a P^b, b = {fit['b']:.2f}{interval}")
    cross = metrics.get("crossing") or {}
    thr = (metrics.get("grokking") or {}).get("threshold_P")
    for value, style, label in ((cross.get("empirical_P"), ":", "crossing (medians)"),
                                (cross.get("power_law_P"), "-.", "crossing (power laws)"),
                                (thr, "-", "grokking threshold")):
        if value is not None and math.isfinite(value):
            ax.axvline(value, color="0.3", ls=style, lw=1, label=f"{label}: P = {value:.3g}")
    unit = metrics.get("time_unit") or "step"
    ax.set(xscale="log", yscale="log", xlabel="parameters P", ylabel=f"{unit}s to 99% accuracy",
           title="Memorisation vs generalisation speed")
    if len(df) and df.P.max() >= 10 * df.P.min():
        ax.xaxis.set_minor_formatter(NullFormatter())  # decade labels only: minor ones overlap
    if not len(df):
        not_built(ax, "no runs")
        return fig
    legend(ax)
    return fig


# ----------------------------------------------------------------------------------------------
# Fig. 2: accuracy curves on the modular task for widths below, at and above the crossing
# ----------------------------------------------------------------------------------------------

def pick_widths(P_by_width: dict[int, int], pivot: float | None) -> list[int]:
    """Three widths: the smallest, the one nearest ``pivot`` in log P, the largest (fewer if equal)."""
    widths = sorted(P_by_width)
    if pivot is None or not math.isfinite(pivot):
        mid = widths[len(widths) // 2]
    else:
        mid = min(widths, key=lambda w: abs(math.log(P_by_width[w] / pivot)))
    return list(dict.fromkeys([widths[0], mid, widths[-1]]))


def fig2_table(curves: pd.DataFrame, metrics: dict) -> pd.DataFrame:
    """The modular-task curves of the three chosen widths, every seed."""
    mod = curves[curves.task == "modular"]
    P_by_width = mod.groupby("width").P.first().to_dict()
    cross = metrics.get("crossing") or {}
    pivot = cross.get("empirical_P")
    if pivot is None or not math.isfinite(pivot):
        pivot = (metrics.get("grokking") or {}).get("threshold_P")
    keep = pick_widths(P_by_width, pivot)
    unit = metrics.get("time_unit") or "step"
    out = mod[mod.width.isin(keep)].rename(columns={unit: "time"})
    return out.assign(time_unit=unit)[["width", "P", "seed", "time", "time_unit", "train_acc", "val_acc"]].reset_index(drop=True)


def fig2(df: pd.DataFrame) -> plt.Figure:
    """Fig. 2 from :func:`fig2_table`: train and validation accuracy per step, one panel per width."""
    widths = sorted(df.width.unique())
    fig, axes = subplots(1, max(len(widths), 1), width="text", height=2.2, sharey=True, squeeze=False)
    for ax, width in zip(axes[0], widths):
        sub = df[df.width == width]
        for seed, g in sub.groupby("seed"):
            first = seed == sub.seed.min()
            ax.plot(g.time, g.train_acc, color=COLORS("train"), lw=0.9, alpha=0.8, label="train" if first else None)
            ax.plot(g.time, g.val_acc, color=COLORS("validation"), lw=0.9, alpha=0.8,
                    label="validation" if first else None)
        ax.axhline(0.99, color="0.5", ls=":", lw=0.8)
        unit = sub.time_unit.iloc[0] if len(sub) else "step"
        ax.set(xscale="log", xlabel=unit, title=f"width {width}, P = {int(sub.P.iloc[0]):,}", ylim=(-0.02, 1.02))
    axes[0][0].set_ylabel("accuracy")
    if not widths:
        not_built(axes[0][0], "no modular-task curves")
    panel_letters(axes[0])
    legend(fig, where="right", title=f"one line per seed,\n{n_text(df.seed.nunique(), 'seed')}" if widths else None)
    return fig


# ----------------------------------------------------------------------------------------------
# Fig. 3: the capacity estimate, bits memorised on random labels against parameters
# ----------------------------------------------------------------------------------------------

def fig3_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The capacity runs: P, bits memorised, the data's bits and whether the run hit its step cap."""
    cap = runs[runs.task == "capacity"]
    out = cap[["width", "seed", "P", "bits", "dataset_bits", "steps", "max_steps"]].copy()
    out["hit_step_cap"] = out.steps >= out.max_steps
    return out.reset_index(drop=True)


def fig3(df: pd.DataFrame, metrics: dict) -> plt.Figure:
    """Fig. 3 from :func:`fig3_table`: bits memorised against P, the fitted and the paper's slope; runs that hit
    their step cap drawn as lower bounds (open triangles), and the fit said to be one when it takes them."""
    fig, ax = subplots(width="column", height=2.6)
    cap = metrics.get("capacity") or {}
    ax.set(xlabel="parameters P", ylabel="bits memorised", title="Capacity")
    if not len(df):
        not_built(ax, "no capacity runs")
        return fig
    capped = df.hit_step_cap.astype(bool)
    done = df[~capped]
    ax.scatter(done.P.to_numpy(float), done.bits.to_numpy(float), color=COLORS("capacity"), s=14,
               label=f"runs (random labels), {n_text(len(done), 'run')}" if len(done) else None, zorder=3)
    # a run stopped at its step cap had not finished memorising: what it holds is a lower bound
    bound = df[capped]
    ax.scatter(bound.P.to_numpy(float), bound.bits.to_numpy(float), marker="^", facecolors="none",
               edgecolors=COLORS("capacity"), s=18, zorder=3,
               label=f"runs at their step cap (lower bounds), {n_text(len(bound), 'run')}" if len(bound) else None)
    if cap.get("bits_per_param") is not None:
        P = np.linspace(0, df.P.max() * 1.05, 50)
        interval = f" [{cap['lo']:.2f}, {cap['hi']:.2f}]" if cap.get("lo") is not None else ""
        # the fit takes every run: with capped runs among them it under-estimates the capacity
        at_cap = f", {len(bound)} of {len(df)} runs capped: a lower bound" if len(bound) else ""
        ax.plot(P, cap["bits_per_param"] * P, color=COLORS("capacity"), ls="--",
                label=f"fit: {cap['bits_per_param']:.2f} bits/param{interval}{at_cap}")
        ax.plot(P, cap["paper_bits_per_param"] * P, color=COLORS("paper"), ls=":",
                label=f"paper: {cap['paper_bits_per_param']:.2f} bits/param")
    legend(fig, where="below", ncol=1)
    return fig


# ----------------------------------------------------------------------------------------------
# Table 1: per width, P and the timescales; then the fits, crossing, threshold, capacity
# ----------------------------------------------------------------------------------------------

def _f(value, spec: str = ".3f") -> str:
    """A number formatted, or :data:`~repro.tables.MISSING` when missing (not measured: null, or NaN)."""
    return MISSING if is_missing(value) else format(value, spec)


def _fmt_time(entry: dict | None) -> str:
    if not entry:
        return ""
    med = f"{entry['median']:.0f}"
    if entry["median_censored"]:
        med = f">{med}"
    return f"{med} ({entry['n_censored']}/{entry['n']} censored)"


def table1(metrics: dict) -> pd.DataFrame:
    """Table 1 from ``metrics.json``: per width P and the timescales; then fits, crossings, capacity."""
    rows = []
    t_mem, t_gen = metrics.get("t_mem", {}), metrics.get("t_gen", {})
    frac = (metrics.get("grokking") or {}).get("fraction", {})
    for key in sorted(set(t_mem) | set(t_gen), key=lambda k: int(k[1:])):
        entry = t_mem.get(key) or t_gen.get(key)
        rows.append({"quantity": f"width {key[1:]}", "P": _f(entry["P"], ",.0f"), "T_mem median": _fmt_time(t_mem.get(key)),
                     "T_gen median": _fmt_time(t_gen.get(key)),
                     "grokked fraction": "" if key not in frac else f"{frac[key]:.2f}"})
    for name in ("t_mem", "t_gen"):
        fit = (metrics.get("power_law") or {}).get(name)
        if fit and fit.get("b") is not None:
            rows.append({"quantity": f"{name} power law a P^b", "P": "",
                         "T_mem median": f"a = {_f(fit['a'], '.3g')}",
                         "T_gen median": f"b = {_f(fit['b'])} [{_f(fit['b_lo'])}, {_f(fit['b_hi'])}]",
                         "grokked fraction": f"{fit['n_censored']}/{fit['n']} censored"})
    cross = metrics.get("crossing") or {}
    grok = metrics.get("grokking") or {}
    empirical = _f(cross.get("empirical_P"), ",.0f")
    for key, side in (("empirical_P_upper_bound", "<"), ("empirical_P_lower_bound", ">")):
        if not is_missing(cross.get(key)):  # the medians never cross in the grid: which side it lies on
            empirical = f"{side} {cross[key]:,.0f} (outside the grid)"
    for label, value in (("crossing, medians", empirical),
                         ("crossing, power laws", _f(cross.get("power_law_P"), ",.0f")),
                         ("grokking threshold", _f(grok.get("threshold_P"), ",.0f"))):
        rows.append({"quantity": label, "P": value, "T_mem median": "", "T_gen median": "", "grokked fraction": ""})
    for name, label in (("log10_ratio_empirical", "log10(threshold / crossing), medians"),
                        ("log10_ratio_power_law", "log10(threshold / crossing), power laws")):
        entry = (metrics.get("threshold_vs_crossing") or {}).get(name)
        if isinstance(entry, dict):
            iv = entry.get("interval") or {}
            rows.append({"quantity": label, "P": _f(entry.get("estimate")),
                         "T_mem median": f"[{_f(iv.get('low'))}, {_f(iv.get('high'))}] (seed bootstrap)",
                         "T_gen median": f"{entry.get('n_undefined')}/{entry.get('n_boot')} resamples undefined",
                         "grokked fraction": ""})
    rows.append({"quantity": "time unit", "P": "", "T_mem median": metrics.get("time_unit") or "step",
                 "T_gen median": f"definitions: {metrics.get('variant') or 'ours'}", "grokked fraction": ""})
    cap = metrics.get("capacity")
    if cap:
        rows.append({"quantity": "capacity (bits/param)", "P": "",
                     "T_mem median": f"{_f(cap['bits_per_param'])} [{_f(cap['lo'])}, {_f(cap['hi'])}]",
                     "T_gen median": f"paper {cap['paper_bits_per_param']}", "grokked fraction": ""})
        rows.append({"quantity": "P to memorise the training set (its bits / C)", "P": _f(cap.get("P_to_memorise_train"), ",.0f"),
                     "T_mem median": "", "T_gen median": "", "grokked fraction": ""})
    return pd.DataFrame(rows)
