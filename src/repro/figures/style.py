"""One figure style for every paper, and deterministic output.

A figure is drawn at the width it is printed at: :data:`TEXT_WIDTH` (a page's text width) or
:data:`COLUMN_WIDTH` (one column), with every font at least :data:`MIN_FONT_PT` at that size.
:func:`subplots` and :func:`new_figure` make such figures with matplotlib's constrained layout, so
titles, labels and legends stay on the page.

The helpers every builder shares:

- :class:`Palette`: one paper's fixed colour per method name. The paper's own method ("ours") is
  :data:`OURS` in every paper and no other name may take that colour; a name without a colour is an
  error, never a guessed colour.
- :func:`legend`: a legend outside the data (right of one panel, or one shared legend for the
  figure above, below or beside the panels).
- :func:`panel_letters`: "(a)", "(b)", ... in each panel's top-left title.
- :func:`not_built`: the panel that says why there is nothing to plot at this scale.
- :func:`interval_err`: error-bar lengths from an interval, missing values kept missing.
- :func:`mark_missing`: "n/a" where a value is missing (undefined, or no unit to measure it on), so that
  an empty slot is not read as 0.
- :func:`se_err`: error-bar lengths of mean ± s.e., cut at the quantity's bounds (a rate stays in [0, 1]).
- :func:`mean_se`: mean, s.e. and count per group; a group of one unit has no s.e. (NaN, no bar).
- :func:`n_text`: "n = 5 seeds" (or "n = 3-5 seeds") from the counts behind the points, for the
  legend title, label or panel title that every figure with error bars or bands shows
  (the lint's ``uncertainty-n``).

:func:`save` writes a figure as a PDF whose bytes depend only on what was drawn (no creation date,
fixed producer, the layout done once and rounded so that every process draws the same bytes:
:func:`freeze_layout`; cropped to a tight bounding box; its Keywords record whether it draws error bars or
bands, :func:`repro.figures.lint.uncertainty`) and, beside it under the same stem, the CSV of the
numbers it plots. With ``REPRO_FIGURE_LINT=1`` in the environment (or :func:`lint_on_save`) it first
runs :mod:`repro.figures.lint` and refuses a figure that fails it. Tables go through
:func:`save_table` (CSV + Markdown).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.transforms import Bbox
import numpy as np
import pandas as pd

from repro.io import atomic_path
from repro.tables import markdown_table, save_csv, save_table  # re-exported: builders write tables beside figures

__all__ = ["apply_style", "Palette", "mean_se", "save", "save_table", "save_csv", "markdown_table", "PALETTE",
           "OURS", "REFERENCE", "FLOOR", "TEXT_WIDTH", "COLUMN_WIDTH", "MIN_FONT_PT", "subplots", "new_figure",
           "legend", "panel_letter", "panel_letters", "not_built", "not_built_figure", "interval_err", "mark_missing", "se_err", "n_text", "categorical",
           "lint_on_save", "freeze_layout", "LAYOUT_GRID", "NOT_BUILT_GID", "PANEL_LETTER_GID", "MISSING_GID"]

#: A page's text width and one column's width (inches): a figure is drawn at one of the two.
TEXT_WIDTH = 5.5
COLUMN_WIDTH = 2.7
#: The smallest font, in points, at the printed size.
MIN_FONT_PT = 6.0

#: The paper's own method, in every paper (Okabe-Ito vermillion); no other name takes it.
OURS = "#D55E00"
#: Oracles, ceilings and other references (dashed levels, not methods).
REFERENCE = "#000000"
#: Random and other floors.
FLOOR = "#888888"

#: Colour-blind-safe colours for everything that is not "ours": Okabe-Ito without vermillion (reserved for
#: ours), yellow (unreadable on white) and black (references), then Tol's muted colours.
PALETTE = ["#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#44AA99", "#999933", "#AA4499",
           "#6699CC", "#332288", "#117733"]

#: gid of the text that :func:`not_built` draws, and of the titles that :func:`panel_letters` sets.
NOT_BUILT_GID = "not-built"
PANEL_LETTER_GID = "panel-letter"
#: gid of the "n/a" marks that :func:`mark_missing` writes.
MISSING_GID = "missing"

RC = {
    "figure.dpi": 100,
    "figure.figsize": (TEXT_WIDTH, 2.4),
    "figure.constrained_layout.use": True,
    "figure.constrained_layout.h_pad": 0.03,
    "figure.constrained_layout.w_pad": 0.03,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    "font.family": "DejaVu Sans",
    "font.size": 7,
    "axes.titlesize": 7,
    "axes.labelsize": 7,
    "xtick.labelsize": 6,
    "ytick.labelsize": 6,
    "legend.fontsize": 6,
    "legend.title_fontsize": 6,
    "figure.titlesize": 7,
    "figure.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "axes.axisbelow": True,  # grids and ticks beneath bars, lines and points
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.4,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "xtick.minor.size": 1.5,
    "ytick.minor.size": 1.5,
    "legend.frameon": False,
    "legend.handlelength": 1.6,
    "legend.columnspacing": 1.0,
    "legend.borderaxespad": 0.2,
    "legend.labelspacing": 0.3,
    "lines.linewidth": 1.1,
    "lines.markersize": 3,
    "errorbar.capsize": 1.5,
    "patch.linewidth": 0.5,
    "hatch.linewidth": 0.5,
    "image.interpolation": "nearest",
    "pdf.fonttype": 42,  # embed TrueType: editable text, and stable bytes
    "svg.hashsalt": "neurips26-repro",
    "path.simplify": False,
}


def apply_style() -> None:
    plt.rcParams.update(RC)


# ----------------------------------------------------------------------------------------------
# Colours
# ----------------------------------------------------------------------------------------------

class Palette:
    """One paper's fixed colour per name; a name it does not know is an error.

    Each paper keeps its palette with its figure builders (``repro.papers.<key>.figures``), so
    generic names ("random", "full") mean one thing per paper and a new paper edits no shared list.
    ``ours`` names the paper's own method (and any variant drawn as it): those take :data:`OURS`,
    the one colour that means "ours" in every paper, and no other name may::

        COLORS = Palette("tmevolve", {"abmil": "#0072B2", "mean": FLOOR}, ours="tmevolve")
        ax.plot(x, y, color=COLORS("abmil"))
    """

    def __init__(self, paper: str, colors: Mapping[str, str] | None = None, *,
                 ours: str | Iterable[str] | None = None) -> None:
        from matplotlib.colors import to_hex

        self.paper = paper
        self.ours = (ours,) if isinstance(ours, str) else tuple(ours or ())
        self.colors = {}
        for name, color in dict(colors or {}).items():
            if name in self.ours and to_hex(color) != to_hex(OURS):
                raise ValueError(f"{paper} palette: {name!r} is ours and must be {OURS}, got {color}")
            if name not in self.ours and to_hex(color) == to_hex(OURS):
                raise ValueError(f"{paper} palette: {name!r} takes {OURS}, the colour that means ours "
                                 f"({', '.join(self.ours) or 'none in this palette'}); give it another")
            self.colors[name] = color
        self.colors.update({name: OURS for name in self.ours})

    def __call__(self, name: str) -> str:
        try:
            return self.colors[name]
        except KeyError:
            raise ValueError(f"{self.paper} palette has no colour for {name!r} (known: {', '.join(self.colors)}); "
                             f"add it to the palette in repro.papers.{self.paper}.figures") from None

    def __contains__(self, name: object) -> bool:
        return name in self.colors

    def __iter__(self):
        return iter(self.colors)


def categorical(names: Iterable[str]) -> dict[str, str]:
    """Distinct colours for categories that are not methods (models under test, tissue types), in order.

    Never :data:`OURS`; more names than :data:`PALETTE` holds is an error rather than a repeated colour.
    """
    names = list(dict.fromkeys(names))
    if len(names) > len(PALETTE):
        raise ValueError(f"{len(names)} categories but only {len(PALETTE)} distinct colours: {names}")
    return dict(zip(names, PALETTE))


# ----------------------------------------------------------------------------------------------
# Figures at their printed width
# ----------------------------------------------------------------------------------------------

def _width(width: str | float) -> float:
    if width == "text":
        return TEXT_WIDTH
    if width == "column":
        return COLUMN_WIDTH
    if isinstance(width, str):
        raise ValueError(f"figure width is 'text', 'column' or inches; got {width!r}")
    return float(width)


def new_figure(width: str | float = "text", height: float = 2.4) -> plt.Figure:
    """An empty constrained-layout figure ``width`` ('text', 'column' or inches) wide, printed at that width."""
    w = _width(width)
    fig = plt.figure(figsize=(w, height), layout="constrained")
    fig.print_width_in = w
    return fig


def subplots(nrows: int = 1, ncols: int = 1, *, width: str | float = "text", height: float = 2.4, **kwargs):
    """``plt.subplots`` on a constrained-layout figure ``width`` wide (see :func:`new_figure`)."""
    fig = new_figure(width, height)
    axes = fig.subplots(nrows, ncols, **kwargs)
    return fig, axes


def _entries(axes: Iterable[plt.Axes]) -> tuple[list, list[str]]:
    """Legend handles and labels of ``axes``, the first of each label."""
    seen: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label and not label.startswith("_"):
                seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


_FIGURE_LOC = {"right": "outside right upper", "below": "outside lower center", "above": "outside upper center",
               "left": "outside left upper"}


def legend(target, *, where: str = "right", ncol: int | None = None, handles=None, labels=None, **kwargs):
    """A legend outside the data.

    ``target`` an Axes: the legend sits right of that panel (``where="right"``, the only side).
    ``target`` a Figure: one legend for the whole figure (entries of every panel, each label once),
    ``where`` 'right', 'left', 'above' or 'below' the panels; the constrained layout makes room.
    Returns the legend, or None when there is nothing to list.
    """
    is_fig = isinstance(target, matplotlib.figure.FigureBase)
    if handles is None:
        handles, labels = _entries(target.axes if is_fig else [target])
    if not handles:
        return None
    if is_fig:
        if where not in _FIGURE_LOC:
            raise ValueError(f"a figure legend goes {', '.join(_FIGURE_LOC)}; got {where!r}")
        if ncol is None:
            ncol = min(len(handles), 4) if where in ("above", "below") else 1
        return target.legend(handles, labels, loc=_FIGURE_LOC[where], ncol=ncol, **kwargs)
    if where != "right":
        raise ValueError(f"a panel's legend goes right of it (use the figure's legend for {where!r})")
    return target.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                         ncol=ncol or 1, **kwargs)


def panel_letter(i: int) -> str:
    """The ``i``-th panel's letter (from 0): a, b, ..., z, then aa, ab, ... (a grid of more than 26 panels)."""
    letters = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        letters = chr(ord("a") + r) + letters
    return letters


def panel_letters(axes: Iterable[plt.Axes], start: int = 0) -> None:
    """Letter the panels "(a)", "(b)", ... in order (after "(z)": "(aa)", ...), in each panel's left title
    (before its title, if any)."""
    for i, ax in enumerate(axes, start=start):
        title = ax.get_title()
        if title:
            ax.set_title("")
        letter = f"({panel_letter(i)})"
        text = ax.set_title(f"{letter} {title}" if title else letter, loc="left")
        text.set_gid(PANEL_LETTER_GID)


def not_built(ax: plt.Axes, why: str, *, chars: int | None = None) -> None:
    """Mark ``ax`` as a panel with nothing to plot: "not built at this scale: <why>", axes hidden."""
    for artist in [*ax.lines, *ax.patches, *ax.collections, *ax.images]:
        artist.remove()
    ax.set_axis_off()
    if chars is None:  # wrap to the panel's width at the text's size (``figure.figure``: the whole figure's, for a
        # panel in a subfigure too, which has no width of its own)
        width = ax.get_position().width * ax.figure.figure.get_figwidth()
        chars = max(16, int(width * 72 / (0.55 * RC["font.size"])))
    ax.text(0.5, 0.5, textwrap.fill(f"not built at this scale: {why}", chars), transform=ax.transAxes,
            ha="center", va="center", color="0.3", gid=NOT_BUILT_GID)


def not_built_figure(why: str, *, width: str | float = "column", height: float = 1.2, title: str | None = None):
    """A whole figure that says why it has nothing to plot (instead of empty axes)."""
    fig, ax = subplots(width=width, height=height)
    not_built(ax, why)
    if title:
        ax.set_title(title)
    return fig


def interval_err(center, low, high) -> np.ndarray:
    """Error-bar lengths (2 x n) of intervals [low, high] around ``center``; a missing value stays missing.

    An interval that does not hold its centre is an error (a table bug, not something to draw).
    """
    c, lo, hi = (np.asarray(v, dtype=float) for v in (center, low, high))
    below, above = c - lo, hi - c
    tol = 1e-9 * np.maximum(1.0, np.abs(c))
    bad = (below < -tol) | (above < -tol)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"interval [{lo[i]}, {hi[i]}] does not hold its centre {c[i]}")
    return np.vstack([np.clip(below, 0, None), np.clip(above, 0, None)])


def mark_missing(ax: plt.Axes, x, y: float = 0.0, *, text: str = "n/a", axes_y: bool = False, **kwargs) -> None:
    """Write ``text`` ("n/a") at each position of ``x`` (data coordinates): the slots whose value is missing.

    A missing value (a rate with no denominator, a quantity no unit could measure) is marked, never drawn as 0
    nor left as an empty slot that reads as one. ``y``: the height, in data coordinates or, with ``axes_y``, as
    a fraction of the axes (for a line plot, where the data's range is not known in advance). ``kwargs`` go to
    :meth:`~matplotlib.axes.Axes.text` (``rotation=90`` in a narrow bar slot).
    """
    transform = ax.get_xaxis_transform() if axes_y else ax.transData
    style = {"ha": "center", "va": "bottom", "color": "0.4", **kwargs}
    for xi in np.atleast_1d(np.asarray(x, dtype=float)):
        ax.text(xi, y, text, transform=transform, gid=MISSING_GID, **style)


def se_err(center, se, *, bounds: tuple[float, float] = (-np.inf, np.inf)) -> np.ndarray:
    """Error-bar lengths (2 x n) of mean ± s.e., each end cut at ``bounds``, the range the quantity can take
    (``(0, 1)`` for a rate or an accuracy): a bar never claims values the quantity cannot have. A missing
    s.e. (one unit, :func:`mean_se`) draws no bar."""
    c, s = (np.asarray(v, dtype=float) for v in (center, se))
    lo, hi = bounds
    return interval_err(c, np.clip(c - s, lo, hi), np.clip(c + s, lo, hi))


def mean_se(df: pd.DataFrame, by: list[str], col: str, *, name: str = "mean") -> pd.DataFrame:
    """Mean, standard error and count of ``col`` per group of ``by``: the error bars of a figure.

    One row per group, the groups as columns; a group of one unit has no standard error (NaN: the
    point is drawn without a bar). ``name`` names the mean's column.
    """
    g = df.groupby(by)[col]
    out = pd.DataFrame({name: g.mean(), "se": g.std(ddof=1) / np.sqrt(g.count()), "n_seeds": g.count()})
    return out.reset_index()


def n_text(counts, unit: str = "", plural: str | None = None) -> str:
    """How many units stand behind the points: "n = 5 seeds", or "n = 3-5 seeds" where the count differs.

    ``counts``: a count per point (e.g. ``mean_se``'s ``n_seeds``), or one count; missing counts are
    ignored. ``unit`` is singular ("seed"), ``plural`` defaults to it with an "s" ("seeds"); a count
    of one says the singular ("n = 1 seed").
    """
    c = np.atleast_1d(np.asarray(counts, dtype=float))
    c = c[np.isfinite(c)]
    if not c.size:
        raise ValueError("n_text: no count to show")
    if np.any(c != np.round(c)) or np.any(c < 0):
        raise ValueError(f"n_text: counts are whole numbers of units; got {sorted(set(c.tolist()))}")
    lo, hi = int(c.min()), int(c.max())
    n = f"{lo}" if lo == hi else f"{lo}-{hi}"
    if not unit:
        return f"n = {n}"
    return f"n = {n} {unit if hi == 1 else plural or unit + 's'}"


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------

_LINT_ON_SAVE: bool | None = None


def lint_on_save(enabled: bool | None) -> None:
    """Run the figure lint in :func:`save` (True), never (False), or as ``REPRO_FIGURE_LINT`` says (None)."""
    global _LINT_ON_SAVE
    _LINT_ON_SAVE = enabled


def _lint_enabled() -> bool:
    if _LINT_ON_SAVE is not None:
        return _LINT_ON_SAVE
    return os.environ.get("REPRO_FIGURE_LINT", "") not in ("", "0")


def _pdf_metadata(title: str, keywords: str) -> dict:
    return {"Title": title, "Keywords": keywords, "Creator": "neurips26-repro",
            "Producer": "neurips26-repro (matplotlib)", "CreationDate": None, "ModDate": None}


#: The grid :func:`freeze_layout` rounds a laid-out figure to, as a fraction of its (sub)figure: 2**-30 (a billionth,
#: about 4e-7 pt across a text-wide figure, far below the PDF's 1e-6 pt precision and invisible), a power of two so
#: that a rounded value is exact.
LAYOUT_GRID = 2.0 ** -30


def _on_grid(values) -> np.ndarray:
    return np.round(np.asarray(values, dtype=float) / LAYOUT_GRID) * LAYOUT_GRID


def freeze_layout(fig: plt.Figure) -> None:
    """Lay ``fig`` out once, round the layout to :data:`LAYOUT_GRID` and keep it: the figure draws the same bytes in
    every process.

    The constrained layout solves for the panels' positions with a linear-constraint solver (kiwisolver) whose
    order of operations follows the memory addresses of its variables, so the same figure's positions differ in
    the last bits from one process to another. In a plain grid of panels those bits rarely reach the PDF; a figure
    with subfigures (each laid out inside a box the solver placed) turns them into different coordinates in the
    PDF (different bytes from the same inputs, whatever ``PYTHONHASHSEED``). The layout runs once here; what it
    placed (each subfigure's box, each panel's position, the suptitles and super labels) is rounded to a grid far
    coarser than that noise, and the layout engine is removed so that later draws (the lint's, ``savefig``'s two
    for the tight bounding box) do not solve again. Everything drawn afterwards is computed from the rounded
    values, so it is the same to the bit. A figure without a layout engine is drawn once and left as it is.
    """
    fig.draw_without_rendering()
    if fig.get_layout_engine() is None:
        return
    figures, stack = [], [fig]
    while stack:
        f = stack.pop()
        figures.append(f)
        stack.extend(f.subfigs)
    for f in figures:
        if f is not fig:  # a subfigure's box, in its parent's coordinates
            x0, y0, x1, y1 = _on_grid(f.bbox_relative.extents)
            f._redo_transform_rel_fig(bbox=Bbox([[x0, y0], [x1, y1]]))
        for text in (f._suptitle, f._supxlabel, f._supylabel):
            if text is not None:
                text.set_position(tuple(_on_grid(text.get_position())))
    for ax in fig.get_axes():  # every panel and colour bar, subfigures' too, in its subfigure's coordinates
        x0, y0, x1, y1 = _on_grid(ax.get_position(original=True).extents)
        # as the layout sets it (``set_position`` would also take the panel out of the layout)
        ax._set_position(Bbox([[x0, y0], [x1, y1]]), which="both")
    fig.set_layout_engine("none")


def save(fig: plt.Figure, table: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``fig`` to ``path`` (PDF, deterministic bytes) and ``table`` as CSV under the same stem.

    ``table`` is the tidy DataFrame the figure plots, so a reader can check every number. The layout is done
    once and frozen (:func:`freeze_layout`): the same figure is the same bytes in every process. The PDF's
    Keywords record whether the figure draws error bars or bands (``uncertainty: drawn``, ``missing``
    or ``none``: :func:`repro.figures.lint.uncertainty`), for the check of its caption
    (:func:`repro.figures.lint.check_captions`). With the lint on (:func:`lint_on_save`), a figure that
    fails :func:`repro.figures.lint.check` is refused with a ``ValueError`` listing its problems, before
    anything is written. A write that runs out of room is an ``OSError`` naming the file
    (:func:`repro.io.atomic_path`).
    """
    from repro.figures.lint import check, pdf_keywords, uncertainty

    path = Path(path)
    if path.suffix != ".pdf":
        raise ValueError(f"figures are written as PDF; got {path}")
    freeze_layout(fig)
    if _lint_enabled():
        problems = check(fig)
        if problems:
            plt.close(fig)
            raise ValueError(f"figure {path.name} fails the figure lint:\n" + "\n".join(map(str, problems)))
    keywords = pdf_keywords(uncertainty(fig))
    # The PDF is rendered first and renamed last, so a failed write (a full disk) leaves neither file under
    # its final name: no CSV whose figure is missing or stale.
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="pdf", metadata=_pdf_metadata(path.stem, keywords), bbox_inches="tight",
                        pad_inches=0.02)
            save_csv(table, path.with_suffix(".csv"))
    finally:
        plt.close(fig)


apply_style()
