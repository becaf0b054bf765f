"""immunize figures: Fig. 1 (harmful accuracy vs adversary steps) and Fig. 2 (curvature before/after; estimator scaling).

Each builder takes the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import Palette, mean_se

__all__ = ["COLORS", "LABELS", "fig1_table", "fig1", "fig2_table", "fig2"]

COLORS = Palette({"none": "#000000", "condnum": "#0072B2", "booster": "#009E73", "ours": "#D55E00",
                  "exact": "#000000", "lanczos": "#D55E00"})
ERROR_FLOOR = 1e-16  # float64 round-off: an error of exactly 0 is drawn here on the log axis
LABELS = {"none": "no defence", "condnum": "condition number (ICML'25)", "booster": "Booster-style",
          "ours": "plateau + curvature (ours)"}


def fig1_table(curves: pd.DataFrame) -> pd.DataFrame:
    """Mean and s.e. over seeds of harmful accuracy per (model, setting, method, step)."""
    return mean_se(curves, ["model", "setting", "method", "step"], "harmful_acc")


def fig1(table: pd.DataFrame):
    """One row of panels per model, one column per adversary setting (and relearning)."""
    settings = sorted(s for s in set(table.setting) if s != "relearn") + ["relearn"]
    models = list(dict.fromkeys(table.model))
    ncol, nrow = len(settings), len(models)
    fig, axes = plt.subplots(nrow, ncol, figsize=(1.9 * ncol, 1.9 * nrow), squeeze=False, sharey=True)
    for ax, (model, setting) in zip(axes.flat, [(mo, st) for mo in models for st in settings]):
        sel = table[(table.setting == setting) & (table.model == model)]
        for method, g in sel.groupby("method", sort=False):
            ax.errorbar(g.step, g["mean"], yerr=g["se"], marker="o", ms=3, color=COLORS(method), label=LABELS[method])
        ax.set_xscale("log")
        name = (setting.replace("_lr", ", lr ").replace("_", " ").replace("p", ".").replace(".robe", "probe")
                if setting != "relearn" else "relearn (adam)")
        ax.set_title(f"{model}: {name}" + (" (not run)" if sel.empty else ""), fontsize=6)
        ax.set_xlabel("adversary steps", fontsize=6)
    for ax in axes[:, 0]:
        ax.set_ylabel("harmful test accuracy", fontsize=6)
    axes[0, 0].legend(fontsize=5)
    fig.tight_layout()
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


def fig2(table: pd.DataFrame):
    fig, axes = plt.subplots(1, 3, figsize=(9.5, 2.8))
    eig = table[table.panel == "eigen"]
    pairs = list(dict.fromkeys(zip(eig.model, eig.method)))
    for i, (model, method) in enumerate(pairs):
        sel = eig[(eig.model == model) & (eig.method == method)]
        for which, marker in (("harmful", "o"), ("benign", "s")):
            for ext in ("min", "max"):
                before = sel[sel.series == f"{which} λ_{ext} before"]["mean"].iloc[0]
                after = sel[sel.series == f"{which} λ_{ext} after"]["mean"].iloc[0]
                x = i + (0.15 if which == "benign" else -0.15)
                axes[0].plot([x, x], [before, after], color=COLORS(method), lw=1)
                axes[0].plot([x], [after], marker=marker, color=COLORS(method), ms=4)
    axes[0].set_yscale("log")
    axes[0].set_xticks(range(len(pairs)), [f"{mo}/{me}" for mo, me in pairs], fontsize=5, rotation=90)
    axes[0].set_ylabel("probe Hessian eigenvalue\n(line: before -> marker: after)")
    axes[0].set_title("o harmful, s benign: λ_min, λ_max", fontsize=8)
    for series, g in table[table.panel == "error"].groupby("series"):
        axes[1].plot(g.x, np.maximum(g["mean"], ERROR_FLOOR), marker="o", ms=3, label=f"Lanczos {series}")
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("parameters D")
    axes[1].set_ylabel(f"relative error (mean; floor {ERROR_FLOOR:g})")
    axes[1].legend(fontsize=7)
    for series, g in table[table.panel == "time"].groupby("series"):
        axes[2].errorbar(g.x, g["mean"], yerr=g["se"], marker="o", ms=3, color=COLORS(series),
                         label="exact Hessian" if series == "exact" else "Lanczos (HVP)")
    axes[2].set_xscale("log")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("parameters D")
    axes[2].set_ylabel("seconds")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    return fig
