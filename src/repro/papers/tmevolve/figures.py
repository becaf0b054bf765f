"""TMEvolve Fig. 3 (our reconstruction, spec ``tmevolve.md``): one test slide's evolution, and C-index of every method.

Panels: (a) the slide's thumbnail with the WSI stage's patch grid, each patch outlined in the colour
of its ground-truth tissue (when the slide exists); (b) the ground-truth tissue type of each patch (said to be missing on a slide without them);
(c) soft regions (argmax S) at q = 0; (d) after Q steps, each titled with its ARI against the tissue types
("n/a" on a slide without ground-truth patch types); (e) boundary flux magnitude
``||sum_j rho_ij (W_f(h_j - h_i) + W_c(c_j - c_i))||``; (f) concept response a_i;
(g) every method, position-shuffle control (hollow) and oracle or random score (grey) as its survival
C-index minus the best baseline's, paired over the (repeat, fold) units, with the interval the survival
claim is decided on (TMEvolve's row is that claim's; every other row the same check, no claim;
:func:`repro.papers.tmevolve.experiment.survival_points`), in the colours of :data:`COLORS`; the labels
give each run's own mean C-index.
Region colours are arbitrary labels, drawn from :data:`REGION_COLOURS`, which shares no colour with the
tissue types, so that a region is never read as a tissue.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap

from repro.figures.style import FLOOR, PALETTE, Palette, interval_err, legend, n_text, new_figure, not_built, panel_letters
from repro.missing import is_missing
from repro.tables import MISSING

__all__ = ["COLORS", "build_fig3", "fig3_table"]

#: TMEvolve, its ablations and its MIL baselines, one fixed colour each (``shuffled_<m>`` controls take
#: ``<m>``'s colour, hatched; oracles and random scores are grey).
COLORS = Palette("tmevolve", {"mean": FLOOR, "abmil": "#0072B2", "transmil": "#009E73", "graphmil": "#CC79A7",
                              "dsmil": "#56B4E9", "tmevolve_nodiff": "#882255", "tmevolve_noevo": "#44AA99",
                              "tmevolve_nobal": "#999933", "tmevolve_randcon": "#AA4499"}, ours="tmevolve")
ORACLE_GREY = "0.75"
#: Soft regions (c, d): Tol's light scheme, none of it a tissue colour (those come from PALETTE).
REGION_COLOURS = ["#77AADD", "#EE8866", "#EEDD88", "#FFAABB", "#99DDFF", "#BBCC33", "#AAAA00", "#DDDDDD"]


def _grid_image(df: pd.DataFrame, column: str, fill=np.nan) -> np.ndarray:
    img = np.full((df.gy.max() + 1, df.gx.max() + 1), fill, dtype=float)
    img[df.gy.to_numpy(), df.gx.to_numpy()] = df[column].to_numpy(dtype=float)
    return img


def _ari(value) -> str:
    """A region ARI as the panel title prints it: missing on a slide without ground-truth patch types (NaN), never
    ``nan``."""
    return MISSING if is_missing(value) else f"{value:.2f}"


def fig3_table(patches: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """The one tidy table the figure plots (the CSV written beside the PDF)."""
    return pd.concat([patches.assign(panel="slide"), points.assign(panel="c_index")], ignore_index=True)


def _thumbnail_panel(ax: plt.Axes, thumbnail, patches: pd.DataFrame, facts: dict, type_cmap) -> None:
    """The slide's thumbnail with the WSI stage's patch grid drawn on it, each patch outlined in its tissue colour."""
    from matplotlib.collections import PatchCollection

    image, (width, height) = thumbnail
    ax.imshow(image, extent=(0, width, height, 0), interpolation="lanczos")
    size = facts.get("patch_size_level0") or 0
    if size and "x0" in patches and (patches.x0 >= 0).all():
        boxes = [plt.Rectangle((x, y), size, size) for x, y in zip(patches.x0, patches.y0)]
        colours = [type_cmap(t) if t >= 0 else "0.5" for t in patches.truth]
        # a white line under each outline: a stroma (pink) outline stays visible on pink stained tissue
        ax.add_collection(PatchCollection(boxes, facecolor="none", edgecolor="white", linewidth=1.3))
        ax.add_collection(PatchCollection(boxes, facecolor="none", edgecolor=colours, linewidth=0.7))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_title("slide and its\npatch grid")
    ax.set_axis_off()


def _comparison_panel(ax: plt.Axes, points: pd.DataFrame) -> None:
    """Each run minus the best baseline (paired over units): a point and its interval; the runs' own
    mean C-index in the labels."""
    y = np.arange(len(points))
    kind = points["kind"] if "kind" in points else pd.Series("method", index=points.index)
    for yi, (_, row), k in zip(y, points.iterrows(), kind):
        colour = ORACLE_GREY if k == "oracle" else COLORS(row.method.removeprefix("shuffled_"))
        hollow = k == "control"
        # the interval as an error bar (none where it is missing: too few units)
        ax.errorbar([row["diff"]], [yi], xerr=interval_err([row["diff"]], [row.low], [row.high]), fmt="none",
                    ecolor=colour, elinewidth=1.2, capsize=0)
        ax.plot([row["diff"]], [yi], marker="D" if k == "oracle" else "o", ms=3.5, color=colour,
                markerfacecolor="white" if hollow else colour, markeredgewidth=0.9, linestyle="none")
    ax.axvline(0.0, color="0.3", lw=0.7)
    ax.set_yticks(y, [f"{m} ({c:.2f})" for m, c in zip(points.method, points["mean"])])
    ax.set_ylim(len(points) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    ref = points["reference"].iloc[0] if "reference" in points and len(points) else "best baseline"
    level = float(points["level"].max()) if "level" in points and points["level"].notna().any() else 0.95
    interval = f"{100 * level:.4g}% interval of the survival claim's check" if points["low"].notna().any() else \
        f"no interval (too few units for {100 * level:.4g}%)"
    ax.set_xlabel(f"C-index minus the best baseline's ({ref})\n{interval}, paired over {n_text(points.n, 'fold x repeat', 'folds x repeats')}")
    ax.set_title("survival; shuffle controls hollow, oracles grey; (mean C-index)")


def build_fig3(patches: pd.DataFrame, points: pd.DataFrame, facts: dict, thumbnail=None) -> plt.Figure:
    """``patches``: per-patch maps (``trace_slide``); ``points``: ``method, kind, mean, diff, low, high, n``
    (``survival_points``); ``facts``: Q, K, ARI, tissue types, patch size; ``thumbnail``: ``(image,
    (width, height))`` of the slide at level 0 (``slide_thumbnail``), or None.

    Panels (a)-(f) are one slide (two rows of three), (g) the comparison of every run below them.
    """
    n_points = len(points)
    points_height = 0.6 + 0.13 * max(n_points, 4)
    maps_height = 3.6
    fig = new_figure("text", maps_height + points_height)
    # two subfigures, each laid out on its own: the comparison's long labels do not narrow the maps' columns
    top, bottom = fig.subfigures(2, 1, height_ratios=[maps_height, points_height])
    maps = list(top.subplots(2, 3).ravel())
    ax_thumb, ax_truth, ax_q0, ax_final, ax_flux, ax_resp = maps
    ax_points = bottom.subplots()
    types = list(facts.get("tissue_types") or [])
    n_types = max(len(types), int(patches.truth.max()) + 1, 1)
    type_cmap = ListedColormap((PALETTE * 2)[:n_types])
    region_cmap = ListedColormap((REGION_COLOURS * 2)[: max(int(facts["K"]), 1)])
    if thumbnail is not None:
        _thumbnail_panel(ax_thumb, thumbnail, patches, facts, type_cmap)
    else:
        not_built(ax_thumb, "no slide image (bags of features only)")
    if (patches.truth >= 0).any():
        ax_truth.imshow(_grid_image(patches.assign(truth=patches.truth.where(patches.truth >= 0)), "truth"),
                        cmap=type_cmap, vmin=-0.5, vmax=n_types - 0.5)
    else:  # a real slide: no patch has a ground-truth tissue type
        not_built(ax_truth, "no ground-truth tissue type on this slide")
    ax_truth.set_title(f"tissue per patch\n(slide {facts['slide_id']})")
    shown = [i for i in range(len(types)) if (patches.truth == i).any()]
    handles = [plt.Rectangle((0, 0), 1, 1, color=type_cmap(i)) for i in shown]
    if handles:
        legend(top, where="below", handles=handles, labels=[types[i] for i in shown], handlelength=0.8,
               ncol=len(handles), title="tissue (a, b)")
    for ax, col, title in ((ax_q0, "region_q0", f"regions, q = 0\n(ARI {_ari(facts.get('ari_q0'))})"),
                           (ax_final, "region_final", f"regions, q = {facts['Q']}\n(ARI {_ari(facts.get('ari_final'))})")):
        ax.imshow(_grid_image(patches, col), cmap=region_cmap, vmin=-0.5, vmax=facts["K"] - 0.5)
        ax.set_title(title)
    for ax, col, title, cmap in ((ax_flux, "flux", "boundary flux\n||Σ ρ (·)||", "magma"),
                                 (ax_resp, "response", "concept\nresponse a_i", "viridis")):
        im = ax.imshow(_grid_image(patches, col), cmap=cmap)
        top.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
        ax.set_title(title)
    for ax in maps[1:]:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    _comparison_panel(ax_points, points)
    panel_letters([*maps, ax_points])
    return fig
