"""TMEvolve Fig. 3 (our reconstruction, spec ``tmevolve.md``): one test slide's evolution, and C-index of every method.

Panels: (a) slide thumbnail (when available); (b) the ground-truth tissue type of each patch;
(c) soft regions (argmax S) at q = 0; (d) after Q steps; (e) boundary flux magnitude
``||sum_j rho_ij (W_f(h_j - h_i) + W_c(c_j - c_i))||``; (f) concept response a_i;
(g) survival C-index (mean +- sd over the cross-validation units) of every method, of the position-shuffle
controls (hatched) and of the oracles and random scores (grey), in the colours of :data:`COLORS`.
Region colours are arbitrary labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap

from repro.figures.style import FLOOR, PALETTE, Palette, legend, new_figure, not_built, panel_letters

__all__ = ["COLORS", "build_fig3", "fig3_table"]

#: TMEvolve, its ablations and its MIL baselines, one fixed colour each (``shuffled_<m>`` controls take
#: ``<m>``'s colour, hatched; oracles and random scores are grey).
COLORS = Palette("tmevolve", {"mean": FLOOR, "abmil": "#0072B2", "transmil": "#009E73", "graphmil": "#CC79A7",
                              "dsmil": "#56B4E9", "tmevolve_nodiff": "#882255", "tmevolve_noevo": "#44AA99",
                              "tmevolve_nobal": "#999933", "tmevolve_randcon": "#AA4499"}, ours="tmevolve")
ORACLE_GREY = "0.75"


def _grid_image(df: pd.DataFrame, column: str, fill=np.nan) -> np.ndarray:
    img = np.full((df.gy.max() + 1, df.gx.max() + 1), fill, dtype=float)
    img[df.gy.to_numpy(), df.gx.to_numpy()] = df[column].to_numpy(dtype=float)
    return img


def fig3_table(patches: pd.DataFrame, bars: pd.DataFrame) -> pd.DataFrame:
    """The one tidy table the figure plots (the CSV written beside the PDF)."""
    return pd.concat([patches.assign(panel="slide"), bars.assign(panel="c_index")], ignore_index=True)


def build_fig3(patches: pd.DataFrame, bars: pd.DataFrame, facts: dict, thumbnail: np.ndarray | None = None) -> plt.Figure:
    """``patches``: per-patch maps (``trace_slide``); ``bars``: ``method, mean, sd``; ``facts``: Q, K, ARI, types.

    Panels (a)-(f) are maps of one slide (two rows of three), (g) the C-index of every method below them.
    """
    n_bars = len(bars)
    bars_height = 0.5 + 0.12 * max(n_bars, 4)
    fig = new_figure("text", 2 * 1.3 + bars_height)
    gs = fig.add_gridspec(3, 3, height_ratios=[1.3, 1.3, bars_height])
    maps = [fig.add_subplot(gs[r, c]) for r in range(2) for c in range(3)]
    ax_thumb, ax_truth, ax_q0, ax_final, ax_flux, ax_resp = maps
    ax_bars = fig.add_subplot(gs[2, :])
    types = list(facts.get("tissue_types") or [])
    n_types = max(len(types), int(patches.truth.max()) + 1, 1)
    type_cmap = ListedColormap((PALETTE * 2)[:n_types])
    region_cmap = ListedColormap((PALETTE[::-1] * 3)[: max(int(facts["K"]), 1)])
    if thumbnail is not None:
        ax_thumb.imshow(thumbnail)
        ax_thumb.set_title("slide thumbnail")
        ax_thumb.set_axis_off()
    else:
        not_built(ax_thumb, "no slide image (bags of features only)")
    ax_truth.imshow(_grid_image(patches.assign(truth=patches.truth.where(patches.truth >= 0)), "truth"),
                    cmap=type_cmap, vmin=-0.5, vmax=n_types - 0.5)
    ax_truth.set_title(f"tissue per patch\n(slide {facts['slide_id']})")
    handles = [plt.Rectangle((0, 0), 1, 1, color=type_cmap(i)) for i in range(len(types))]
    if handles:
        legend(ax_truth, handles=handles, labels=types, handlelength=0.8)
    for ax, col, title in ((ax_q0, "region_q0", f"regions, q = 0\n(ARI {facts['ari_q0']:.2f})"),
                           (ax_final, "region_final", f"regions, q = {facts['Q']}\n(ARI {facts['ari_final']:.2f})")):
        ax.imshow(_grid_image(patches, col), cmap=region_cmap, vmin=-0.5, vmax=facts["K"] - 0.5)
        ax.set_title(title)
    for ax, col, title, cmap in ((ax_flux, "flux", "boundary flux\n||Σ ρ (·)||", "magma"),
                                 (ax_resp, "response", "concept\nresponse a_i", "viridis")):
        im = ax.imshow(_grid_image(patches, col), cmap=cmap)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
        ax.set_title(title)
    for ax in maps[1:]:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    ax = ax_bars
    y = np.arange(n_bars)
    kind = bars["kind"] if "kind" in bars else pd.Series("method", index=bars.index)
    colours = [COLORS(m.removeprefix("shuffled_")) if k != "oracle" else ORACLE_GREY for m, k in zip(bars.method, kind)]
    barc = ax.barh(y, bars["mean"], xerr=bars["sd"], color=colours, error_kw={"lw": 0.6})
    for patch, k in zip(barc, kind):
        if k == "control":
            patch.set_hatch("//")
            patch.set_edgecolor("white")
    ax.set_yticks(y, bars.method)
    ax.invert_yaxis()
    lo = float(np.nanmin(bars["mean"] - bars["sd"])) if n_bars else 0.5
    ax.set_xlim(max(0.0, min(0.5, lo) - 0.02), 1.0)
    ax.axvline(0.5, color="0.5", lw=0.8, ls=":")
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("survival C-index (mean ± sd over folds x repeats)")
    ax.set_title("methods, shuffle controls (//), oracles (grey)")
    panel_letters([*maps, ax_bars])
    return fig
