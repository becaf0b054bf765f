"""cmcboot's figures and table, each built from the long coverage table (``coverage_long.csv``):

- :func:`fig1`: coverage vs sample size at a fixed episode length;
- :func:`fig2`: coverage vs episode length at a fixed total sample size;
- :func:`table1`: coverage and mean width of every method, target and setting.

Both figures have one panel per target and nominal level, a line per method and behaviour policy,
and the nominal level drawn; the title gives the number of Monte Carlo replicates behind each
coverage (no error bars: their Monte Carlo s.e. is the table's ``mc_se``). The methods' colours are
:data:`COLORS`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from repro.figures.style import Palette, legend, n_text, panel_letters, subplots

__all__ = ["fig1", "fig2", "table1", "coverage_grid", "coverage_figure", "COLORS", "METHOD_ORDER", "METHOD_LABELS"]

#: Fixed colours of the interval variants (the percentile bootstrap, the paper's method, in vermillion).
COLORS = Palette("cmcboot", {"model_basic": "#E69F00", "episodic": "#0072B2", "clt": "#009E73"},
                 ours="model_percentile")

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
    fig, axes = subplots(len(targets), len(levels), width="text", height=1.3 * len(targets) + 1.0, sharex=True,
                         sharey=True, squeeze=False)
    for i, target in enumerate(targets):
        for j, level in enumerate(levels):
            ax = axes[i, j]
            ax.axhline(level, color="black", lw=0.8, ls=":", label="nominal")
            cell = table[(table["target"] == target) & (table["level"] == level)]
            for method in [m for m in METHOD_ORDER if m in set(cell["method"])]:
                for policy, style in POLICY_STYLES.items():
                    line = cell[(cell["method"] == method) & (cell["policy"] == policy)].sort_values(x)
                    if len(line):
                        ax.plot(line[x], line["coverage"], style, marker="o", color=COLORS(method),
                                label=f"{METHOD_LABELS[method]}, {policy}")
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_xticks(xs, [f"{v:g}" for v in xs])
            ax.set_ylim(-0.02, 1.02)
            if i == 0:
                ax.set_title(f"nominal {level:.0%}")
            if j == 0:
                ax.set_ylabel(f"coverage,\n{TARGET_LABELS[target]}")
            if i == len(targets) - 1:
                ax.set_xlabel(xlabel)
    panel_letters(axes.flat)
    legend(fig, where="below", ncol=3)
    fig.suptitle(title)
    return fig


def coverage_figure(table: pd.DataFrame, *, fixed: str, value: int, x: str, xlabel: str, title: str,
                    setting: str) -> tuple[plt.Figure, pd.DataFrame]:
    """Rows of the long table with ``fixed == value``, plotted against ``x``; returns figure and rows.

    The title names the fixed ``setting`` and the number of replicates behind each coverage."""
    plotted = table[table[fixed] == value].sort_values(["target", "level", "method", "policy", x]).reset_index(drop=True)
    if plotted.empty:
        raise ValueError(f"cmcboot figure: no rows of the coverage table with {fixed}={value}")
    title = f"{title} ({setting}; {n_text(plotted['n_replicates'], 'replicate')} per point)"
    return coverage_grid(plotted, x, xlabel, title), plotted


def fig1(table: pd.DataFrame, *, episode_length: int) -> tuple[plt.Figure, pd.DataFrame]:
    """Fig. 1 (coverage vs sample size) from the long coverage table; returns the figure and the rows it plots."""
    return coverage_figure(table, fixed="episode_length", value=episode_length, x="n",
                           xlabel="sample size (transitions)",
                           title="RiverSwim: coverage vs sample size", setting=f"episodes of {episode_length} steps")


def fig2(table: pd.DataFrame, *, sample_size: int) -> tuple[plt.Figure, pd.DataFrame]:
    """Fig. 2 (coverage vs episode length at a fixed total sample size) from the long coverage table;
    returns the figure and the rows it plots."""
    return coverage_figure(table, fixed="n", value=sample_size, x="episode_length", xlabel="episode length (steps)",
                           title="RiverSwim: coverage vs episode length", setting=f"{sample_size} transitions")


def table1(table: pd.DataFrame) -> pd.DataFrame:
    """Table 1 from the long coverage table: one row per setting x target x level, a coverage and a
    width column per method."""
    index = ["policy", "n", "episode_length", "target", "level"]
    wide = table.pivot_table(index=index, columns="method", values=["coverage", "width"], aggfunc="first")
    methods = [m for m in METHOD_ORDER if m in set(table["method"])]
    columns = {}
    for m in methods:
        columns[f"{m} coverage"] = wide[("coverage", m)]
        columns[f"{m} width"] = wide[("width", m)]
    out = pd.DataFrame(columns).reset_index()
    return out.sort_values(index).reset_index(drop=True)
