"""immunize figures: Fig. 1 (harmful accuracy vs adversary steps) and Fig. 2 (curvature before/after; estimator scaling).

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator, NullFormatter

from repro.figures.style import (REFERENCE, Palette, legend, mean_se, n_text, new_figure, not_built, panel_letters, se_err,
                                 subplots)

__all__ = ["COLORS", "LABELS", "fig1_table", "fig1", "fig2_table", "fig2"]

COLORS = Palette("immunize", {"none": REFERENCE, "condnum": "#0072B2", "booster": "#009E73", "exact": "#666666",
                              "lanczos": "#CC79A7", "λ_max": "#56B4E9", "λ_min": "#E69F00"}, ours="ours")
ERROR_FLOOR = 1e-16  # float64 round-off: an error of exactly 0 is drawn here on the log axis
LABELS = {"none": "no defence", "condnum": "condition number (ICML'25)", "booster": "Booster-style",
          "ours": "plateau + curvature (ours)"}


def fig1_table(curves: pd.DataFrame) -> pd.DataFrame:
    """Mean and s.e. over seeds of harmful accuracy per (model, setting, method, step)."""
    return mean_se(curves, ["model", "setting", "method", "step"], "harmful_acc")


_SETTING = re.compile(r"^(?P<mode>[a-z]+)_(?P<optimizer>[a-z]+)_lr(?P<lr>[0-9pme]+)$")
_MODE = {"full": "full fine-tuning", "probe": "probe only"}
_OPTIMIZER = {"adam": "Adam", "sgd": "SGD"}


def _parse_setting(key: str) -> tuple[str, str, float]:
    """``probe_sgd_lr0p1`` -> ("probe", "sgd", 0.1): the inverse of :func:`repro.papers.immunize.experiment.setting_key`."""
    m = _SETTING.match(key)
    if m is None:
        raise ValueError(f"immunize fig1: setting {key!r} is neither 'relearn' nor <mode>_<optimizer>_lr<rate>")
    return m["mode"], m["optimizer"], float(m["lr"].replace("p", ".").replace("m", "-"))


def _curves(ax, sel: pd.DataFrame) -> None:
    for method, g in sel.groupby("method", sort=False):
        ax.errorbar(g.step, g["mean"], yerr=se_err(g["mean"], g["se"], bounds=(0, 1)), marker="o", ms=2,
                    lw=0.9, elinewidth=0.6, color=COLORS(method), label=LABELS[method])


def _steps_axis(ax, steps) -> None:
    ax.set_xscale("log")
    ax.set_ylim(-0.03, 1.03)
    ax.set_yticks([0, 0.5, 1], ["0", "0.5", "1"])
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if len(steps):
        ax.set_xlim(min(steps) / 1.6, max(steps) * 1.6)


def fig1(table: pd.DataFrame):
    """Harmful accuracy against adversary steps: (top) the open-weights adversary, one row per model and mode
    (full fine-tuning, probe only), one column per optimiser and learning rate; (bottom) relearning after
    unlearning, one panel per model. One shared legend below; every panel lettered."""
    models = list(dict.fromkeys(table.model))
    keys = sorted(s for s in set(table.setting) if s != "relearn")
    parsed = {k: _parse_setting(k) for k in keys}
    modes = [m for m in ("full", "probe") if any(p[0] == m for p in parsed.values())]
    modes += sorted({p[0] for p in parsed.values()} - set(modes))
    columns = sorted({(p[1], p[2]) for p in parsed.values()})  # (optimiser, lr): Adam's first, lr ascending
    by_cell = {(p[0], p[1], p[2]): k for k, p in parsed.items()}
    steps = sorted(set(table.step))
    rows = [(mo, md) for mo in models for md in modes]
    relearn = "relearn" in set(table.setting)
    row_h = 0.78
    top_h = 0.45 + row_h * max(len(rows), 1)
    bottom_h = 1.3 if relearn else 0.0
    fig = new_figure("text", height=top_h + bottom_h + 0.45)
    if relearn:
        top, bottom = fig.subfigures(2, 1, height_ratios=[top_h, bottom_h])
    else:
        top, bottom = fig, None
    grid = top.subplots(max(len(rows), 1), max(len(columns), 1), squeeze=False, sharex=True, sharey=True)
    for i, (model, mode) in enumerate(rows):
        for j, (opt, lr) in enumerate(columns):
            ax = grid[i, j]
            key = by_cell.get((mode, opt, lr))
            sel = table[(table.model == model) & (table.setting == key)] if key else table.iloc[:0]
            _curves(ax, sel)
            _steps_axis(ax, steps)
            if i == 0:
                ax.set_title(f"{_OPTIMIZER.get(opt, opt)}\nlr {lr:g}")
            if sel.empty:
                not_built(ax, "left out for cost")
        grid[i, 0].set_ylabel(f"{model}\n{_MODE.get(mode, mode)}")
    top.supxlabel("adversary steps")
    top.supylabel("harmful test accuracy, open-weights adversary")
    axes = list(grid.flat)
    if bottom is not None:
        panels = bottom.subplots(1, len(models), squeeze=False, sharex=True, sharey=True)[0]
        for ax, model in zip(panels, models):
            sel = table[(table.model == model) & (table.setting == "relearn")]
            _curves(ax, sel)
            _steps_axis(ax, steps)
            ax.set_title(model)
            ax.set_xlabel("relearning steps")
            if sel.empty:
                not_built(ax, "not run")
        panels[0].set_ylabel("harmful test acc.")
        bottom.suptitle("relearning after unlearning (Adam)")
        axes += list(panels)
    panel_letters(axes)
    legend(fig, where="below", ncol=4, title=f"mean ± s.e. over seeds, {n_text(table.n_seeds, 'seed')}")
    return fig


def fig2_table(tidy: pd.DataFrame, scaling: pd.DataFrame) -> pd.DataFrame:
    """Long table: panel ``eigen`` (model x method x task x when x extreme) and panels ``error`` / ``time`` (vs n_params)."""
    rows = []
    for which in ("harmful", "benign"):
        for when in ("before", "after"):
            for ext in ("min", "max"):
                t = mean_se(tidy, ["model", "method"], f"{which}_{when}_{ext}")
                rows.append(t.assign(panel="eigen", series=f"{which} λ_{ext} {when}", x=np.nan))
    for col, panel, series in (("rel_err_max", "error", "λ_max"), ("rel_err_min", "error", "λ_min"),
                               ("exact_s", "time", "exact"), ("lanczos_s", "time", "lanczos")):
        t = mean_se(scaling, ["n_params"], col).rename(columns={"n_params": "x"})
        rows.append(t.assign(panel=panel, series=series, model="", method=""))
    cols = ["panel", "series", "model", "method", "x", "mean", "se", "n_seeds"]
    return pd.concat(rows, ignore_index=True)[cols]


def _one_three_ticks(lo: float, hi: float) -> list[float]:
    """The values 1 and 3 x 10^k within [lo, hi] (a little beyond each end), for a log axis spanning a decade or so."""
    ks = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
    return [m * 10.0 ** k for k in ks for m in (1, 3) if lo / 1.2 <= m * 10.0 ** k <= hi * 1.2]


def fig2(table: pd.DataFrame):
    fig, axes = subplots(1, 3, width="text", height=3.0)
    eig = table[table.panel == "eigen"]
    pairs = list(dict.fromkeys(zip(eig.model, eig.method)))
    # the probe Hessian is positive semi-definite: a mean eigenvalue <= 0 is 0 up to round-off (a rank-deficient
    # feature map), which a log axis cannot show; it is drawn at the axis' floor, a decade below the smallest
    # positive mean, with a hollow marker (the CSV keeps the value)
    positive = eig["mean"][eig["mean"] > 0]
    floor = positive.min() / 10 if len(positive) else 1e-12
    at_floor = False
    for i, (model, method) in enumerate(pairs):
        sel = eig[(eig.model == model) & (eig.method == method)]
        for which, marker in (("harmful", "o"), ("benign", "s")):
            for ext in ("min", "max"):
                before = sel[sel.series == f"{which} λ_{ext} before"]["mean"].iloc[0]
                after = sel[sel.series == f"{which} λ_{ext} after"]["mean"].iloc[0]
                x = i + (0.15 if which == "benign" else -0.15)
                axes[0].plot([x, x], [max(before, floor), max(after, floor)], color=COLORS(method), lw=1)
                hollow = after <= 0
                at_floor |= bool(hollow)
                axes[0].plot([x], [max(after, floor)], marker=marker, color=COLORS(method), ms=4,
                             mfc="white" if hollow else COLORS(method))
    axes[0].set_yscale("log")
    axes[0].set_ylim(bottom=floor / 2)
    axes[0].set_xticks(range(len(pairs)), [f"{mo}/{me}" for mo, me in pairs], rotation=90)
    axes[0].grid(axis="x", visible=False)
    axes[0].set_ylabel("probe Hessian eigenvalue\n(line: before, marker: after)")
    axes[0].set_title("λ_min, λ_max")
    for series, g in table[table.panel == "error"].groupby("series"):
        axes[1].plot(g.x, np.maximum(g["mean"], ERROR_FLOOR), marker="o", color=COLORS(series),
                     label=f"Lanczos {series} error")
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("parameters D")
    axes[1].set_ylabel(f"relative error\n(mean; floor {ERROR_FLOOR:g})")
    for series, g in table[table.panel == "time"].groupby("series"):
        axes[2].errorbar(g.x, g["mean"], yerr=se_err(g["mean"], g["se"], bounds=(0, np.inf)), marker="o",
                         color=COLORS(series),
                         label="exact Hessian" if series == "exact" else "Lanczos (HVP)")
    axes[2].set_xscale("log")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("parameters D")
    axes[2].set_ylabel("seconds")
    for ax in axes:
        ax.yaxis.set_minor_formatter(NullFormatter())  # decade labels only: minor ones overlap
    sizes = table.x.dropna()
    for ax in axes[1:]:
        ax.xaxis.set_minor_formatter(NullFormatter())
        if len(sizes):  # the decades alone label at most one tick over small's range of D: label 1, 3 x 10^k too
            ticks = _one_three_ticks(sizes.min(), sizes.max())
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    panel_letters(axes)
    handles, labels = [], []
    for ax in axes[1:]:
        h, lab = ax.get_legend_handles_labels()
        handles, labels = handles + h, labels + lab
    handles += [Line2D([], [], ls="none", marker=m, color="0.3") for m in ("o", "s")]
    labels += ["harmful probe (a)", "benign probe (a)"]
    if at_floor:
        handles += [Line2D([], [], ls="none", marker="o", color="0.3", mfc="white")]
        labels += ["λ ≤ 0 (round-off), at the floor (a)"]
    legend(fig, where="below", handles=handles, labels=labels, ncol=3,
           title=f"means over seeds, {n_text(table.n_seeds, 'seed')}; in (c) ± s.e.")
    return fig
