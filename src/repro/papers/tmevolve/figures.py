"""TMEvolve Fig. 3 (our reconstruction, spec ``tmevolve.md``): one test slide's evolution, and C-index of every method.

Panels: (a) slide thumbnail (when available) and the ground-truth tissue type of each patch;
(b) soft regions (argmax S) at q = 0; (c) after Q steps; (d) boundary flux magnitude
``||sum_j rho_ij (W_f(h_j - h_i) + W_c(c_j - c_i))||``; (e) concept response a_i;
(f) survival C-index (mean +- sd over the cross-validation units) of every method, of the position-shuffle
controls (hatched) and of the oracles and random scores (grey), in the colours of :data:`COLORS`.
Region colours are arbitrary labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap

from repro.figures.style import PALETTE, Palette

__all__ = ["COLORS", "build_fig3", "fig3_table"]

#: TMEvolve and its MIL baselines, one fixed colour each (ablation variants get hashed colours).
COLORS = Palette({"tmevolve": "#D55E00", "mean": "#888888", "abmil": "#0072B2", "transmil": "#009E73",
                  "graphmil": "#CC79A7", "dsmil": "#56B4E9"})


def _grid_image(df: pd.DataFrame, column: str, fill=np.nan) -> np.ndarray:
    img = np.full((df.gy.max() + 1, df.gx.max() + 1), fill, dtype=float)
    img[df.gy.to_numpy(), df.gx.to_numpy()] = df[column].to_numpy(dtype=float)
    return img


def fig3_table(patches: pd.DataFrame, bars: pd.DataFrame) -> pd.DataFrame:
    """The one tidy table the figure plots (the CSV written beside the PDF)."""
    return pd.concat([patches.assign(panel="slide"), bars.assign(panel="c_index")], ignore_index=True)


def build_fig3(patches: pd.DataFrame, bars: pd.DataFrame, facts: dict, thumbnail: np.ndarray | None = None) -> plt.Figure:
    """``patches``: per-patch maps (``trace_slide``); ``bars``: ``method, mean, sd``; ``facts``: Q, K, ARI, types."""
    fig = plt.figure(figsize=(12, 6.4))
    gs = fig.add_gridspec(2, 4)
    ax_thumb = fig.add_subplot(gs[0, 0])
    axes = np.array([[fig.add_subplot(gs[0, 1]), fig.add_subplot(gs[0, 2]), fig.add_subplot(gs[0, 3])],
                     [fig.add_subplot(gs[1, 0]), fig.add_subplot(gs[1, 1]), fig.add_subplot(gs[1, 2:])]])
    types = list(facts.get("tissue_types") or [])
    n_types = max(len(types), int(patches.truth.max()) + 1, 1)
    type_cmap = ListedColormap(PALETTE[:n_types])
    region_cmap = ListedColormap((PALETTE[::-1] * 3)[: max(int(facts["K"]), 1)])
    if thumbnail is not None:
        ax_thumb.imshow(thumbnail)
    else:
        ax_thumb.text(0.5, 0.5, "no slide image\n(bags only)", ha="center", va="center")
    ax_thumb.set_title("(a) slide thumbnail")
    ax_thumb.set_axis_off()
    ax = axes[0, 0]
    ax.imshow(_grid_image(patches.assign(truth=patches.truth.where(patches.truth >= 0)), "truth"), cmap=type_cmap,
              vmin=-0.5, vmax=n_types - 0.5, interpolation="nearest")
    handles = [plt.Rectangle((0, 0), 1, 1, color=PALETTE[i]) for i in range(len(types))]
    if handles:
        ax.legend(handles, types, loc="upper left", bbox_to_anchor=(0, -0.02), ncol=3, fontsize=6)
    ax.set_title(f"(a) ground-truth tissue per patch, {facts['slide_id']}")
    for ax, col, title in ((axes[0, 1], "region_q0", f"(b) regions q = 0 (ARI {facts['ari_q0']:.2f})"),
                           (axes[0, 2], "region_final", f"(c) regions q = {facts['Q']} (ARI {facts['ari_final']:.2f})")):
        ax.imshow(_grid_image(patches, col), cmap=region_cmap, vmin=-0.5, vmax=facts["K"] - 0.5, interpolation="nearest")
        ax.set_title(title)
    for ax, col, title, cmap in ((axes[1, 0], "flux", "(d) boundary flux ||sum rho (.)||", "magma"),
                                 (axes[1, 1], "response", "(e) concept response a_i", "viridis")):
        im = ax.imshow(_grid_image(patches, col), cmap=cmap, interpolation="nearest")
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
        ax.set_title(title)
    for ax in axes.flat[:5]:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    ax = axes[1, 2]
    y = np.arange(len(bars))
    kind = bars["kind"] if "kind" in bars else pd.Series("method", index=bars.index)
    colours = [COLORS(m.removeprefix("shuffled_")) if k != "oracle" else "0.75" for m, k in zip(bars.method, kind)]
    barc = ax.barh(y, bars["mean"], xerr=bars["sd"], color=colours, capsize=2)
    for patch, k in zip(barc, kind):
        if k == "control":
            patch.set_hatch("//")
    ax.set_yticks(y, bars.method)
    ax.invert_yaxis()
    lo = float(np.nanmin(bars["mean"] - bars["sd"])) if len(bars) else 0.5
    ax.set_xlim(max(0.0, min(0.5, lo) - 0.02), 1.0)
    ax.axvline(0.5, color="0.5", lw=0.8, ls=":")
    ax.set_xlabel("survival C-index (mean +- sd over folds x repeats)")
    ax.set_title("(f) methods, shuffle controls (//), oracles (grey)")
    fig.tight_layout()
    return fig
