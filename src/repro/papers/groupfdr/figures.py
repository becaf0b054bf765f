"""groupfdr figures: Fig. 1 (FDR and power against rho and amplitude) and Fig. 2 (the mirror
statistics of one replicate and the FDP estimate with its threshold), and the paper's colours.

One builder per figure, each taking the tidy DataFrame it plots (written beside the PDF as CSV).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.figures.style import FLOOR, Palette, interval_err, legend, n_text, not_built, panel_letters, subplots
from repro.methods.mirror import data_adaptive_threshold, fdp_curve

__all__ = ["COLORS", "fig1", "fig2_tables", "fig2"]

#: Fixed colours of the paper's methods (the group Gaussian mirror is ours).
COLORS = Palette("groupfdr", {"group_ngm": "#CC79A7", "gm": "#0072B2", "ngm": "#882255", "knockoff": "#009E73",
                              "group_knockoff": "#56B4E9", "bh": FLOOR, "group_gm_ols": "#44AA99",
                              "group_gm_plus": "#999933", "group_gm_whitened": "#AA4499"}, ours="group_gm")
#: Fig. 2: true groups and nulls.
TRUE, NULL = "#009E73", FLOOR
#: Fig. 2: the data-adaptive threshold tau_q, in both panels.
TAU = "#CC79A7"


def fig1(table: pd.DataFrame, q: float):
    """``table``: the aggregate's tidy summary rows (sweep, x, method, q, fdr, power, replicates and the
    bounds of :func:`repro.papers.groupfdr.experiment.figure_intervals`); plots level ``q``.

    (a, b) mean FDP, the dashed line at q; each point's bar is the interval in ``fdr_low``/``fdr_high``:
    where an FDR claim checks the cell (ours), the one the claim is decided on (bootstrap over replicates,
    Bonferroni over the claim's cells; none where the replicates are too few for its level), else
    mean +- s.e. (c, d) mean power +- s.e. (e, f) the power claims' quantity: our mean paired power gain
    over each compared method, with the claim's interval, in the correlated settings (at the power
    claims' q). n is in the legend's title.
    """
    sweeps = [s for s in ("correlation", "amplitude") if s in set(table.sweep)]
    fig, axes = subplots(3, len(sweeps), width="text", height=5.0, squeeze=False, sharey="row")
    sub = table[table.q == q]
    gains = table[table.power_gain.notna()]
    for col, sweep in enumerate(sweeps):
        part = sub[sub.sweep == sweep]
        # methods side by side at each x (a small offset, so that no bar hides another); the CSV keeps x
        methods = sorted(set(part.method))
        step = 0.012 * (np.ptp(table.x[table.sweep == sweep]) or 1.0)
        offset = {m: (j - (len(methods) - 1) / 2) * step for j, m in enumerate(methods)}
        for method, grp in part.groupby("method", sort=True):
            grp = grp.sort_values("x")
            for row, key in enumerate(("fdr", "power")):
                axes[row, col].errorbar(grp.x + offset[method], grp[key],
                                        yerr=interval_err(grp[key], grp[f"{key}_low"], grp[f"{key}_high"]),
                                        color=COLORS(method), marker="o", label=method)
        axes[0, col].axhline(q, color="black", ls="--", lw=0.8, label=f"q = {q:g}")
        axes[0, col].set_title(f"{sweep} sweep")
        xlabel = "rho (within; between = rho/2)" if sweep == "correlation" else "signal amplitude"
        ax = axes[2, col]
        part = gains[gains.sweep == sweep]
        for method, grp in part.groupby("method", sort=True):
            grp = grp.sort_values("x")
            ax.errorbar(grp.x + offset.get(method, 0.0), grp.power_gain,
                        yerr=interval_err(grp.power_gain, grp.power_gain_low, grp.power_gain_high),
                        color=COLORS(method), marker="s", label=method)
        if part.empty:
            not_built(ax, "no power claim compares methods in this sweep's settings")
            axes[1, col].set_xlabel(xlabel)
            continue
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xlim(axes[0, col].get_xlim())
        ours = ", ".join(sorted(set(part.power_gain_of)))
        ax.set_title(f"power gain of {ours} (q = {part.q.iloc[0]:g})")
        ax.set_xlabel(xlabel)
    axes[0, 0].set_ylabel("empirical FDR")
    axes[1, 0].set_ylabel("power")
    axes[2, 0].set_ylabel("power gain over each\nmethod (paired)")
    axes[1, 0].set_ylim(-0.02, 1.02)
    panel_letters(axes.flat)
    claimed = pd.concat([sub[sub.fdr_interval.str.startswith("claim ")][["fdr_low"]].set_axis(["low"], axis=1),
                         gains[["power_gain_low"]].set_axis(["low"], axis=1)])
    none = " (none drawn at this scale: too few replicates for its level)" if claimed.low.isna().any() else ""
    legend(fig, where="above", ncol=6,
           title=f"{n_text(sub.replicates, 'replicate')} per point. Bars: mean ± s.e., except where a claim decides "
                 f"the point (ours' FDR, the gains):\nthe interval the claim is decided on{none}")
    return fig


def fig2_tables(stats: np.ndarray, is_true: np.ndarray, q: float) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """Fig. 2's data: (per-group statistics, FDP^(t) curve on a grid, tau_q)."""
    stats = np.asarray(stats, float)
    order = np.argsort(-stats)
    groups = pd.DataFrame({"rank": np.arange(len(stats)), "group": order, "M": stats[order],
                           "is_true": np.asarray(is_true, bool)[order]})
    ts = np.sort(np.unique(np.abs(stats[stats != 0])))
    curve = pd.DataFrame({"t": ts, "fdp_hat": fdp_curve(stats, ts)})
    return groups, curve, data_adaptive_threshold(stats, q)


def fig2(groups: pd.DataFrame, curve: pd.DataFrame, tau: float, q: float):
    """Left: the mirror statistic of each group, sorted, true groups green, nulls grey, with the selection threshold
    ±tau_q; right: FDP^(t) and tau_q, where it first falls to q. One legend, right of both panels: tau_q is drawn in
    one colour in both, so that the line in (a) is not read as q."""
    fig, (a, b) = subplots(1, 2, width="text", height=2.3)
    colors = np.where(groups.is_true, TRUE, NULL)
    a.bar(groups["rank"], groups.M, color=colors, width=0.9)
    if np.isfinite(tau):
        a.axhline(tau, color=TAU, lw=0.8, label=rf"$\tau_q$ = {tau:.3g}")
        a.axhline(-tau, color=TAU, ls=":", lw=0.8, label=r"$-\tau_q$")
    a.set_xlabel("group (sorted by M)")
    a.set_ylabel("mirror statistic M")
    a.set_title("true groups (green), nulls (grey)")
    b.step(curve.t, curve.fdp_hat, where="post", color="#0072B2")
    b.axhline(q, color="black", ls="--", lw=0.8, label=f"q = {q:g}")
    if np.isfinite(tau):
        b.axvline(tau, color=TAU, lw=0.8, label=rf"$\tau_q$ = {tau:.3g}")
    b.set_xlabel("threshold t")
    b.set_ylabel(r"estimated FDP, $\widehat{\mathrm{FDP}}(t)$")
    b.set_ylim(0, 1.05)
    panel_letters([a, b])
    legend(fig, where="right")
    return fig
