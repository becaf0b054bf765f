"""cmcboot Fig. 1: coverage vs sample size (one panel per target and nominal level, a line per method
and behaviour policy, the nominal level drawn)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import method_color

__all__ = ["build", "coverage_grid", "coverage_figure", "METHOD_ORDER", "METHOD_LABELS"]

METHOD_ORDER = ("model_percentile", "model_basic", "episodic", "clt")
METHOD_LABELS = {"model_percentile": "model-based percentile", "model_basic": "model-based basic",
                 "episodic": "episodic bootstrap", "clt": "plug-in CLT"}
TARGET_LABELS = {"P": "entries of P", "V_pi": r"$V^\pi$", "V_star": r"$V^*$", "Q_star": r"$Q^*$"}
POLICY_STYLES = {"uniform": "-", "sticky": "--"}


def coverage_grid(table: pd.DataFrame, x: str, xlabel: str, title: str) -> plt.Figure:
    """Coverage against column ``x``: rows of panels are targets, columns nominal levels."""
    targets = [t for t in TARGET_LABELS if t in set(table["target"])]
    levels = sorted(table["level"].unique())
    xs = sorted(table[x].unique())
    fig, axes = plt.subplots(len(targets), len(levels), figsize=(2.4 * len(levels) + 0.6, 1.9 * len(targets) + 0.6),
                             sharex=True, squeeze=False)
    for i, target in enumerate(targets):
        for j, level in enumerate(levels):
            ax = axes[i, j]
            ax.axhline(level, color="black", lw=0.8, ls=":", label="nominal")
            cell = table[(table["target"] == target) & (table["level"] == level)]
            for method in [m for m in METHOD_ORDER if m in set(cell["method"])]:
                for policy, style in POLICY_STYLES.items():
                    line = cell[(cell["method"] == method) & (cell["policy"] == policy)].sort_values(x)
                    if len(line):
                        ax.plot(line[x], line["coverage"], style, marker="o", color=method_color(method),
                                label=f"{METHOD_LABELS[method]}, {policy}")
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_xticks(xs, [f"{v:g}" for v in xs])
            ax.set_ylim(-0.02, 1.02)
            if i == 0:
                ax.set_title(f"nominal {level:.0%}")
            if j == 0:
                ax.set_ylabel(f"coverage, {TARGET_LABELS[target]}")
            if i == len(targets) - 1:
                ax.set_xlabel(xlabel)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.09, 1, 0.97))
    return fig


def coverage_figure(table: pd.DataFrame, *, fixed: str, value: int, x: str, xlabel: str,
                    title: str) -> tuple[plt.Figure, pd.DataFrame]:
    """Rows of the long table with ``fixed == value``, plotted against ``x``; returns figure and rows."""
    plotted = table[table[fixed] == value].sort_values(["target", "level", "method", "policy", x]).reset_index(drop=True)
    if plotted.empty:
        raise ValueError(f"cmcboot figure: no rows of the coverage table with {fixed}={value}")
    return coverage_grid(plotted, x, xlabel, title), plotted


def build(table: pd.DataFrame, *, episode_length: int) -> tuple[plt.Figure, pd.DataFrame]:
    """Fig. 1 from the long coverage table; returns the figure and the rows it plots."""
    return coverage_figure(table, fixed="episode_length", value=episode_length, x="n",
                           xlabel="sample size (transitions)",
                           title=f"RiverSwim: coverage vs sample size (episodes of {episode_length} steps)")
