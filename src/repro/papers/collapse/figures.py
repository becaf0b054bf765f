"""collapse's figures and table: one builder per figure, each from the tidy table it plots.

Fig. 1: component weights over generations, synthetic-only (λ_inj = 0) beside the largest
injection fraction of the grid. Fig. 2: the SGLD LLC (with the RLCT of the stratum the fit sits
on) and the Fisher nullity over generations, extinctions marked. Fig. 3: curvature in the first
dying component's mean directions against its weight (log-log), with the closed form π/σ² of
separated components. Table 1: survival per injection fraction; the geometry's per-replicate
slopes and the LLC's distance to the stratum RLCT.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import Palette, legend, n_text, not_built, panel_letters, subplots

__all__ = ["COLORS", "fig4_table", "fig4", "fig1_table", "fig1", "fig2_table", "fig2", "fig3_table", "fig3", "table1"]

#: One colour per planted component (labels persist across generations); collapse proposes no method, so
#: no name takes the colour of "ours".
COLORS = Palette("collapse", {"component 0": "#0072B2", "component 1": "#009E73", "component 2": "#E69F00",
                              "component 3": "#882255", "component 4": "#CC79A7", "component 5": "#56B4E9",
                              "component 6": "#44AA99", "component 7": "#999933"})
#: Fig. 2's series.
LLC, NULLITY, MARK, RLCT = "#0072B2", "#009E73", "#CC79A7", "#000000"


def _component(k: int) -> str:
    return f"component {int(k)}"


# ----------------------------------------------------------------------------------------------
# Fig. 1: weights over generations, synthetic-only vs injection
# ----------------------------------------------------------------------------------------------

def fig1_table(generations: pd.DataFrame) -> pd.DataFrame:
    """Weights of every replicate at λ_inj = 0 and at the largest λ_inj of the grid."""
    injects = sorted(generations.inject.unique())
    shown = [injects[0], injects[-1]] if len(injects) > 1 else injects
    df = generations[generations.inject.isin(shown)]
    return df[["inject", "replicate", "generation", "component", "weight", "extinct"]].reset_index(drop=True)


def fig1(df: pd.DataFrame) -> plt.Figure:
    injects = sorted(df.inject.unique())
    fig, axes = subplots(1, len(injects), width="text", height=2.3, sharey=True, squeeze=False)
    for ax, inject in zip(axes[0], injects):
        sub = df[df.inject == inject]
        for k, comp in sub.groupby("component"):
            color = COLORS(_component(k))
            for _, rep in comp.groupby("replicate"):
                ax.plot(rep.generation, rep.weight, color=color, alpha=0.25, lw=0.6)
            med = comp.groupby("generation").weight.median()
            ax.plot(med.index, med.values, color=color, lw=1.6, label=_component(k))
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_ylim(0, 1)
        n_rep = sub.replicate.nunique()
        ax.set_title("synthetic only" if inject == 0 else f"fresh-data fraction {inject:g}")
        ax.set_xlabel(f"generation ({n_text(n_rep, 'replicate')}; median bold)")
    axes[0, 0].set_ylabel("component weight (symlog below 1e-3)")
    panel_letters(axes[0])
    legend(fig, where="right")
    return fig


# ----------------------------------------------------------------------------------------------
# Fig. 2: LLC and nullity over generations, extinctions marked
# ----------------------------------------------------------------------------------------------

def fig2_table(generations: pd.DataFrame) -> pd.DataFrame:
    """Per diagnosed (λ_inj, replicate, generation): λ̂, its SE, the Laplace prediction, the stratum RLCT, nullity."""
    diag = generations[generations.diagnosed & generations.llc.notna() & (generations.component == 0)]
    cols = ["inject", "replicate", "generation", "n_extinct", "llc", "llc_se", "llc_quadratic", "rlct_stratum", "nullity"]
    return diag[cols].reset_index(drop=True)


def fig2(df: pd.DataFrame) -> plt.Figure:
    injects = sorted(df.inject.unique())
    fig, axes = subplots(2, len(injects), width="text", height=3.6, sharex=True, squeeze=False)
    for j, inject in enumerate(injects):
        sub = df[df.inject == inject]
        ax_llc, ax_null = axes[0, j], axes[1, j]
        for i, (rep, g) in enumerate(sub.groupby("replicate")):
            ax_llc.plot(g.generation, g.llc, color=LLC, alpha=0.35, lw=0.7,
                        label="SGLD LLC (per replicate)" if i == 0 else None)
            ax_llc.plot(g.generation, g.rlct_stratum, color=RLCT, ls="--", lw=0.7, alpha=0.5,
                        label="RLCT of the stratum" if i == 0 else None)
            ax_null.plot(g.generation, g.nullity, color=NULLITY, alpha=0.35, lw=0.7,
                         label="Fisher nullity (per replicate)" if i == 0 else None)
            new = g[g.n_extinct.diff().fillna(0) > 0]
            ax_llc.scatter(new.generation, new.llc, marker="x", color=MARK, s=14, zorder=3,
                           label="extinction" if len(new) else None)
            ax_null.scatter(new.generation, new.nullity, marker="x", color=MARK, s=14, zorder=3)
        mean = sub.groupby("generation")[["llc", "nullity"]].mean()
        ax_llc.plot(mean.index, mean.llc, color=LLC, lw=1.8, label="mean LLC")
        ax_null.plot(mean.index, mean.nullity, color=NULLITY, lw=1.8, label="mean nullity")
        ax_llc.set_title("synthetic only" if inject == 0 else f"fresh-data fraction {inject:g}")
        ax_null.set_xlabel("generation")
    axes[0, 0].set_ylabel("local learning coefficient")
    axes[1, 0].set_ylabel("Fisher nullity")
    panel_letters(axes.flat)
    legend(fig, where="below", ncol=3, title=n_text(df.groupby("inject").replicate.nunique(), "diagnosed replicate"))
    return fig


# ----------------------------------------------------------------------------------------------
# Fig. 3: curvature vs weight of a dying component
# ----------------------------------------------------------------------------------------------

def fig3_table(generations: pd.DataFrame, metrics: dict) -> pd.DataFrame:
    """The first-dying component of each diagnosed synthetic-only replicate, at its diagnosed generations while alive."""
    g = generations[(generations.inject == 0) & generations.diagnosed & generations.curvature.notna()]
    rows = []
    for rep, r in g.groupby("replicate"):
        ext = r[r.extinct]
        if ext.empty:
            continue
        first = ext.sort_values(["generation", "component"]).iloc[0]
        comp = r[(r.component == first.component) & (r.generation < first.generation)]
        rows.append(comp.assign(extinct_at=int(first.generation)))
    if not rows:
        return pd.DataFrame(columns=["replicate", "component", "generation", "weight", "curvature", "extinct_at"])
    df = pd.concat(rows, ignore_index=True)
    return df[["replicate", "component", "generation", "weight", "curvature", "extinct_at"]]


def fig3(df: pd.DataFrame, metrics: dict) -> plt.Figure:
    fig, ax = subplots(width="column", height=2.6)
    if df.empty:
        not_built(ax, "no diagnosed synthetic-only replicate lost a component, so there is no dying "
                      "component to follow")
        ax.set_title("curvature vs weight of the dying component")
        return fig
    sigma = float(metrics.get("sigma", 1.0))
    for i, (rep, r) in enumerate(df.groupby("replicate")):
        ax.plot(r.weight, r.curvature, marker="o", ms=2.5, lw=0.6, alpha=0.6, color=LLC,
                label=f"one line per replicate ({n_text(df.replicate.nunique(), 'replicate')})" if i == 0 else None)
    w = np.geomspace(max(df.weight.min(), 1e-6), df.weight.max(), 50)
    ax.plot(w, w / sigma ** 2, color="#000000", ls="--", lw=1, label="π / σ² (separated components)")
    slope = ((metrics.get("synthetic_only") or {}).get("curvature_loglog_slope") or {})
    if "values" in slope:
        v = np.asarray(slope["values"])
        ax.set_title(f"log-log slope {v.mean():.2f}\n(mean of {len(v)} replicates)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("weight of the dying component")
    ax.set_ylabel("Fisher curvature\nin its mean directions")
    legend(fig, where="below", ncol=1)
    return fig


# ----------------------------------------------------------------------------------------------
# Table 1
# ----------------------------------------------------------------------------------------------

def _summary(node) -> tuple[float, float, float, int]:
    """(mean, low, high, n) of a per-replicate sample (t interval), or the undecided estimate."""
    if not node:
        return (math.nan,) * 3 + (0,)
    if "values" in node:
        v = np.asarray(node["values"], float)
        half = 1.96 * v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else math.nan
        return float(v.mean()), float(v.mean() - half), float(v.mean() + half), len(v)
    return float(node.get("estimate", math.nan)), math.nan, math.nan, int(node.get("n", 0))


def table1(metrics: dict) -> pd.DataFrame:
    rows = []
    for key, v in metrics["injection"]["by_inject"].items():
        rows.append({"quantity": f"survival of all components, fresh-data fraction {v['inject']:g}",
                     "estimate": v["survival_rate"], "low": v["survival_low"], "high": v["survival_high"],
                     "n": v["n"], "note": f"Wilson 95%; mean extinct at G {v['mean_extinct_at_G']:.2f}"})
    rows.append({"quantity": "injection threshold (smallest fraction with survival lower bound >= "
                             f"{metrics['injection']['survival_level']:g} from there on)",
                 "estimate": metrics["injection"]["threshold"], "low": math.nan, "high": math.nan,
                 "n": math.nan, "note": "grid value"})
    names = {"llc_slope_per_extinction": "LLC change per extinct component (slope)",
             "nullity_slope_per_extinction": "Fisher nullity change per extinct component (slope)",
             "curvature_loglog_slope": "log-log slope, curvature vs weight of the dying component",
             "llc_minus_rlct_gen0": "LLC - RLCT at generation 0 (regular)",
             "llc_minus_rlct_final": "LLC - RLCT at generation G (singular stratum)",
             "llc_change_final": "LLC(G) - LLC(0), replicates with an extinction"}
    for inject, geo in metrics["geometry"].items():
        for key, label in names.items():
            est, lo, hi, n = _summary(geo.get(key))
            rows.append({"quantity": f"{label}, {inject}", "estimate": est, "low": lo, "high": hi,
                         "n": n, "note": "mean over replicates, t 95%"})
    for model, node in (metrics.get("neural") or {}).items():
        if model == "n_runs":
            continue
        for arm in ("synthetic_only", "injected", "fresh_only"):
            if arm not in node:  # not in the grid (without a fraction between 0 and 1, injected_fraction is null)
                continue
            arm_label = (f"fresh-data fraction {node['injected_fraction']:g}" if arm == "injected" else
                         {"synthetic_only": "synthetic only", "fresh_only": "fresh data only (fraction 1)"}[arm])
            for key, label in NEURAL_TABLE_ROWS.items():
                if key not in node[arm]:
                    continue
                est, lo, hi, n = _summary(node[arm][key])
                rows.append({"quantity": f"neural {model}: {label}, {arm_label}", "estimate": est, "low": lo,
                             "high": hi, "n": n, "note": "mean over seeds, t 95%"})
    return pd.DataFrame(rows)


#: The neural part's rows of Table 1 (metrics["neural"][model][arm] keys).
NEURAL_TABLE_ROWS = {"llc_change": "LLC(G) - LLC(0)", "gn_erank_change": "Gauss-Newton eff. rank change",
                     "feature_erank_change": "feature eff. rank change",
                     "decoder_curvature_change": "decoder curvature change",
                     "class_tv_final": "class TV to planted at G", "digits_lost_final": "digits lost at G",
                     "loss_auc_curvature": "AUC of low cluster curvature for later loss",
                     "loss_auc_weight": "AUC of low cluster weight for later loss"}


# ----------------------------------------------------------------------------------------------
# Fig. 4: neural diagnostics over generations, synthetic-only vs injection
# ----------------------------------------------------------------------------------------------

#: The panels of fig4 (rows) and their axis labels.
FIG4_ROWS = {"class_tv": "class TV to planted", "llc": "LLC (SGLD)", "gn_erank": "Gauss-Newton eff. rank",
             "feature_erank": "feature eff. rank"}
ARMS = Palette("collapse", {"synthetic only": "#CC79A7", "injection": "#0072B2", "fresh only": "#009E73"})


def fig4_table(neural: pd.DataFrame) -> pd.DataFrame:
    """The synthetic-only runs, the largest fraction below 1 and the fresh-only control (λ = 1), long: model, arm,
    seed, generation, metric, value."""
    if neural.empty:
        raise ValueError("collapse fig4: no neural runs; the preset needs a collapse.<scale>.neural block")
    injects = sorted(neural.inject.unique())
    mixed = [a for a in injects if 0 < a < 1]
    shown = {injects[0], *mixed[-1:], *[a for a in injects if a == 1]}
    df = neural[neural.inject.isin(shown)].copy()
    df["arm"] = np.select([df.inject == 0, df.inject == 1], ["synthetic only", "fresh only"], "injection")
    long = df.melt(id_vars=["model", "arm", "inject", "seed", "generation"], value_vars=list(FIG4_ROWS),
                   var_name="metric", value_name="value").dropna(subset=["value"])
    return long.sort_values(["metric", "model", "arm", "seed", "generation"]).reset_index(drop=True)


def fig4(df: pd.DataFrame) -> plt.Figure:
    models = [m for m in ("vae", "vade", "ddpm") if m in set(df.model)]
    fig, axes = subplots(len(FIG4_ROWS), len(models), width="text", height=0.6 + 1.35 * len(FIG4_ROWS),
                         squeeze=False, sharex=True)
    for i, (metric, label) in enumerate(FIG4_ROWS.items()):
        for j, model in enumerate(models):
            ax = axes[i, j]
            sub = df[(df.metric == metric) & (df.model == model)]
            if sub.empty:
                not_built(ax, f"no {label} for {model}")
            for arm, part in sub.groupby("arm"):
                color = ARMS(arm)
                for _, run in part.groupby("seed"):
                    ax.plot(run.generation, run.value, color=color, alpha=0.2, lw=0.6)
                mean = part.groupby("generation").value.mean()
                lam = part.inject.iloc[0]
                ax.plot(mean.index, mean.values, color=color, lw=1.6, marker="o", ms=2.5,
                        label=arm if lam == 0 else f"{arm} ({lam:g})")
            if i == 0:
                ax.set_title(model.upper() if model != "vade" else "VaDE")
            if j == 0:
                ax.set_ylabel(label)
            if i == len(FIG4_ROWS) - 1:
                ax.set_xlabel("generation")
    panel_letters(axes.flat)
    legend(fig, where="below", ncol=3, title=f"mean over seeds (thin: each seed), "
                                             f"{n_text(df.groupby(['model', 'arm']).seed.nunique(), 'seed')}")
    return fig
