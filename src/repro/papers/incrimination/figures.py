"""incrimination's figures and table.

Fig. 1: protocol accuracy against the planted motive vs CoT faithfulness (at the largest number of
samples per condition; one panel per sample size), for CoT-only, interventions-only and the
combined protocol, with the random floor and the oracle ceiling. Fig. 2: the intervention effects
(drop in the rate of the concerning action) per environment for each planted motive: the
fingerprints that separate motives. Table 1: the verdicts for each agent under investigation.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from repro.figures.style import FLOOR, REFERENCE, Palette, legend, n_text, panel_letters, subplots

__all__ = ["COLORS", "fig1", "fig2", "table1"]

COLORS = Palette("incrimination", {"interventions_only": "#0072B2", "cot_only": "#009E73", "random": FLOOR,
                                   "oracle": REFERENCE}, ours="combined")
LINES = {"random": ":", "oracle": "--"}
LABELS = {"cot_only": "CoT only", "interventions_only": "interventions only", "combined": "combined (ours)",
          "random": "random floor", "oracle": "oracle ceiling"}


def fig1(table: pd.DataFrame) -> plt.Figure:
    """One panel per samples-per-condition; accuracy (Wilson 95% band over cases) vs faithfulness. One x label and
    one legend (below) for all panels, so that the narrow panels keep their titles apart."""
    ns = sorted(table.n.unique())
    fig, axes = subplots(1, len(ns), width="text", height=2.5, sharey=True, squeeze=False)
    for ax, n in zip(axes[0], ns):
        for method in ("cot_only", "interventions_only", "combined", "random", "oracle"):
            sub = table[(table.n == n) & (table.method == method)].sort_values("faithfulness")
            ax.plot(sub.faithfulness, sub.accuracy, LINES.get(method, "-o"), color=COLORS(method),
                    label=LABELS[method])
            ax.fill_between(sub.faithfulness, sub.low, sub.high, color=COLORS(method), alpha=0.15, lw=0)
        ax.set_title(f"{n} episodes\nper condition")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])  # short labels: neighbouring panels' ends stay apart
    axes[0][len(ns) // 2].set_xlabel("CoT faithfulness")
    axes[0][0].set_ylabel("accuracy (verdict\n= planted motive)")
    panel_letters(axes[0])
    legend(fig, where="below", ncol=5, title=f"Wilson 95% band over cases, {n_text(table.cases, 'case')}")
    return fig


def _cell(v: float) -> str:
    """A heatmap cell: two decimals without the leading zero (the cells are narrow); blank when missing."""
    return "" if np.isnan(v) else f"{v:.2f}".replace("0.", ".", 1)


def fig2(table: pd.DataFrame) -> plt.Figure:
    """One heatmap per planted motive: environments x interventions, cells the effect on the rate."""
    motives = list(dict.fromkeys(table.motive))
    envs = list(dict.fromkeys(table.env))
    factors = list(dict.fromkeys(table.factor))
    ncols = min(3, len(motives))
    nrows = math.ceil(len(motives) / ncols)
    fig, axes = subplots(nrows, ncols, width="text", height=0.4 + nrows * (0.8 + 0.17 * len(envs)), squeeze=False)
    for ax in axes.flat[len(motives):]:
        ax.remove()
    shown = axes.flat[:len(motives)]
    for k, (ax, motive) in enumerate(zip(shown, motives)):
        grid = (table[table.motive == motive].pivot(index="env", columns="factor", values="effect")
                .reindex(index=envs, columns=factors).to_numpy())
        im = ax.imshow(grid, vmin=-1, vmax=1, cmap="RdBu_r", aspect="auto")
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, _cell(v), ha="center", va="center", fontsize=6, color="white" if abs(v) > 0.6 else "black")
        ax.set_xticks(range(len(factors)), factors, rotation=45, ha="right", rotation_mode="anchor")
        ax.set_yticks(range(len(envs)), envs if k % ncols == 0 else [])
        ax.set_title(motive)
        ax.grid(False)
    panel_letters(shown)
    fig.colorbar(im, ax=list(shown), shrink=0.8,
                 label=f"rate(control) - rate(intervention)\n({n_text(table.episodes, 'episode')} per arm and cell)")
    return fig


def table1(table: pd.DataFrame) -> pd.DataFrame:
    """Per agent and environment: control rate, each effect with its interval, the evidence, the verdicts."""
    first = ["agent", "env", "control_rate", "episodes_per_condition"]
    return table[first + [c for c in table.columns if c not in first]]
