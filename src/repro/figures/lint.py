"""A lint for figures: what a reader of the printed page would see wrong, checked on the Figure itself.

:func:`check` takes one matplotlib Figure (as it is just before :func:`repro.figures.style.save`
writes it) and returns its :class:`Problem` s, one rule each:

- ``width``: the figure is as wide as where it goes (:data:`~repro.figures.style.TEXT_WIDTH` or
  :data:`~repro.figures.style.COLUMN_WIDTH`);
- ``font-size``: every text is at least :data:`~repro.figures.style.MIN_FONT_PT` at the printed width;
- ``text-outside``: no text (titles, labels, tick labels, annotations, legends) leaves the canvas;
- ``text-overlap``: no two texts overlap (a long label running into the next panel's);
- ``legend-overlap``: no legend lies over a data artist (lines, bars, points, bands, images);
- ``panel-letters``: panel letters, where present, are unique;
- ``empty-axes``: no panel is empty (no finite data; reference levels alone do not count) unless it
  says why (:func:`~repro.figures.style.not_built`);
- ``uncertainty-n``: a figure that draws error bars or bands (:func:`uncertainty`) says over how many
  units, in a drawn text matching ``n = <integer>`` (a legend title or label, a panel title, an
  annotation; "n = 3-5 seeds" where it varies). Error bars are those of matplotlib's ``errorbar``
  (also drawn by ``bar(..., yerr=...)``), bands those of ``fill_between``; bars whose every length is
  missing (each point over one unit, :func:`~repro.figures.style.mean_se`) draw nothing and do not count.

:func:`uncertainty` says whether a figure draws uncertainty ("drawn"), would but every interval is
missing ("missing"), or draws none ("none"); :func:`repro.figures.style.save` records it in the PDF's
Keywords (``uncertainty: <state>``), read back by :func:`recorded_uncertainty`.
:func:`check_captions` takes a folder of built figures and the captions' folder: a figure that draws
uncertainty has a caption with a sentence beginning ``Error bars:`` or ``Bands:`` (what they are, over
which units, where n is shown), one that draws none has no such sentence, and one whose every interval
is missing at this scale may have it or not (a caption serves every scale).

:func:`check_colours` takes a paper's figures together: one colour per legend label across them.
:func:`assert_clean` raises a ``ValueError`` listing the problems.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import matplotlib.collections as mcollections
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import Collection, LineCollection, PathCollection
from matplotlib.colors import to_hex
from matplotlib.container import ErrorbarContainer
from matplotlib.image import AxesImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from repro.figures.style import COLUMN_WIDTH, MIN_FONT_PT, NOT_BUILT_GID, PANEL_LETTER_GID, TEXT_WIDTH

__all__ = ["Problem", "check", "check_colours", "check_captions", "assert_clean", "print_width", "uncertainty",
           "recorded_uncertainty", "pdf_keywords", "DRAWN", "MISSING", "NONE"]

#: Slack, in points, for "inside the canvas" and "overlaps".
TOLERANCE_PT = 0.5
_LETTER = re.compile(r"^\(([a-z])\)(\s|$)")

#: What :func:`uncertainty` says of a figure: error bars or bands drawn; there, but every one missing; none.
DRAWN, MISSING, NONE = "drawn", "missing", "none"
#: The count of units beside an interval ("n = 5 seeds", "TMEvolve (n = 5)", "n = 3-5").
N_TEXT = re.compile(r"\bn\s*=\s*\d")
#: A caption's sentence that says what the error bars or bands are.
CAPTION_SENTENCE = re.compile(r"(?:\A|[.!?]\s+)(?:Error bars|Bands):")
#: The PDF Keywords entry :func:`repro.figures.style.save` writes.
_KEYWORD = re.compile(r"\buncertainty: (\w+)")
# fill_between's collection (matplotlib >= 3.10; a plain PolyCollection before)
_BAND = getattr(mcollections, "FillBetweenPolyCollection", mcollections.PolyCollection)


@dataclass(frozen=True)
class Problem:
    rule: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


def print_width(fig: plt.Figure) -> float:
    """The width (inches) ``fig`` is printed at: as made by the style's helpers, else at most the text width."""
    return float(getattr(fig, "print_width_in", None) or min(fig.get_figwidth(), TEXT_WIDTH))


def _texts(fig: plt.Figure) -> list[Text]:
    """Every text that is drawn: visible, non-empty, in a visible parent."""
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        ax = t.axes
        if ax is not None and not ax.get_visible():
            continue
        out.append(t)
    return out


def _drawn_tick_labels(fig: plt.Figure) -> set[int]:
    """ids of the tick labels matplotlib draws (ticks inside the view limits)."""
    drawn = set()
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.get_visible():
                continue
            for tick in axis._update_ticks():
                for label in (tick.label1, tick.label2):
                    if label.get_visible():
                        drawn.add(id(label))
    return drawn


def _tick_labels(fig: plt.Figure) -> set[int]:
    out = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                out.update((id(tick.label1), id(tick.label2)))
    return out


def _describe(t: Text) -> str:
    text = t.get_text().replace("\n", " ")
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _is_colorbar(ax) -> bool:
    return ax.get_label() == "<colorbar>"


def _finite(a) -> bool:
    a = np.asarray(a, dtype=float)
    return a.size > 0 and bool(np.isfinite(a).any())


def _is_reference(line: Line2D, ax) -> bool:
    """A line across the axes at a fixed level (``axhline``, ``axvline``): a reference, not data."""
    return not line.get_transform().contains_branch(ax.transData)


def _data_artists(ax, *, references: bool = True) -> list:
    """The artists of ``ax`` that show data and have at least one finite value (``references``: count
    ``axhline``/``axvline`` levels too)."""
    out = []
    for line in ax.lines:
        if not references and _is_reference(line, ax):
            continue
        x, y = line.get_xdata(orig=False), line.get_ydata(orig=False)
        try:
            ok = _finite(np.asarray(x, float) + np.asarray(y, float))
        except (TypeError, ValueError):
            ok = len(x) > 0
        if line.get_visible() and ok:
            out.append(line)
    for patch in ax.patches:
        if not patch.get_visible():
            continue
        ext = patch.get_extents()
        if np.isfinite([ext.x0, ext.y0, ext.x1, ext.y1]).all():
            out.append(patch)
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        paths = coll.get_paths()
        offsets = coll.get_offsets()
        if isinstance(coll, PathCollection):
            if _finite(offsets):
                out.append(coll)
        elif any(_finite(p.vertices) for p in paths):
            out.append(coll)
    for im in ax.images:
        if im.get_visible() and _finite(np.ma.filled(np.ma.asarray(im.get_array(), dtype=float), np.nan)):
            out.append(im)
    return out


def _uncertainty_artists(ax) -> list[Collection]:
    """The error bars (line collections of ``errorbar``, also drawn by ``bar(..., yerr=...)``) and bands
    (``fill_between``) that ``ax`` still holds and shows."""
    bars = {id(c) for cont in ax.containers if isinstance(cont, ErrorbarContainer) for c in cont.lines[2]}
    return [c for c in ax.collections if c.get_visible() and (id(c) in bars or isinstance(c, _BAND))]


def _draws_something(coll: Collection) -> bool:
    """Whether one of the collection's paths (an error bar's segment, a band's polygon) is wholly finite."""
    return any(len(p.vertices) and np.isfinite(p.vertices).all() for p in coll.get_paths())


def uncertainty(fig: plt.Figure) -> str:
    """Whether ``fig`` draws error bars or bands: :data:`DRAWN` (at least one with finite ends),
    :data:`MISSING` (there are some, but every length is missing: each point over one unit) or :data:`NONE`."""
    artists = [a for ax in fig.axes if ax.get_visible() for a in _uncertainty_artists(ax)]
    if any(_draws_something(a) for a in artists):
        return DRAWN
    return MISSING if artists else NONE


def _segments_hit(points: np.ndarray, box: Bbox) -> bool:
    """Whether a polyline (n x 2 display points, NaN breaks it) crosses ``box``."""
    from matplotlib.path import Path

    good = np.isfinite(points).all(axis=1)
    start = 0
    for stop in [*np.flatnonzero(~good), len(points)]:
        run = points[start:stop]
        start = stop + 1
        if len(run) == 1 and box.contains(*run[0]):
            return True
        if len(run) >= 2 and Path(run).intersects_bbox(box, filled=False):
            return True
    return False


def _overlaps(artist, box: Bbox, renderer) -> bool:
    """Whether a data artist draws anything inside ``box`` (display coordinates)."""
    if isinstance(artist, Line2D):
        pts = artist.get_transform().transform(np.column_stack([artist.get_xdata(orig=False),
                                                                artist.get_ydata(orig=False)]).astype(float))
        if artist.get_linestyle() not in ("None", "none", "", " ") and _segments_hit(pts, box):
            return True
        if artist.get_marker() not in (None, "None", "none", "", " "):
            r = artist.get_markersize() / 2 * renderer.points_to_pixels(1.0)
            grown = box.padded(r)
            return bool(any(grown.contains(x, y) for x, y in pts if np.isfinite([x, y]).all()))
        return False
    if isinstance(artist, Patch):
        ext = artist.get_window_extent(renderer)
        return bool(np.isfinite([ext.x0, ext.x1, ext.y0, ext.y1]).all() and ext.overlaps(box))
    if isinstance(artist, PathCollection):
        pts = artist.get_offset_transform().transform(np.asarray(artist.get_offsets(), float))
        sizes = artist.get_sizes()
        r = (np.sqrt(sizes.max()) / 2 if len(sizes) else 0.0) * renderer.points_to_pixels(1.0)
        grown = box.padded(r)
        return bool(any(grown.contains(x, y) for x, y in pts if np.isfinite([x, y]).all()))
    if isinstance(artist, Collection):
        transform = artist.get_transform()
        filled = not isinstance(artist, LineCollection)
        for path in artist.get_paths():
            pts = transform.transform(path.vertices.astype(float))
            if not np.isfinite(pts).all():
                continue
            from matplotlib.path import Path

            if Path(pts, path.codes).intersects_bbox(box, filled=filled):
                return True
        return False
    if isinstance(artist, AxesImage):
        return artist.get_window_extent(renderer).overlaps(box)
    return False


def _legends(fig: plt.Figure) -> list[Legend]:
    out = [lg for lg in fig.legends if lg.get_visible()]
    out += [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None and ax.get_legend().get_visible()]
    return out


def check(fig: plt.Figure) -> list[Problem]:
    """Every problem of ``fig`` (see the module docstring); an empty list is a clean figure.

    The lint draws the figure to measure it. Each layout pass of the constrained layout engine moves the artists a
    little, so :func:`repro.figures.style.save` lays a figure out once and freezes that layout
    (:func:`repro.figures.style.freeze_layout`) before it lints: the lint's draw moves nothing, and the PDF does not
    depend on whether the lint ran.
    """
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    problems: list[Problem] = []
    px_per_pt = fig.dpi / 72.0
    tol = TOLERANCE_PT * px_per_pt

    # width
    width = fig.get_figwidth()
    if not any(abs(width - w) < 0.01 for w in (TEXT_WIDTH, COLUMN_WIDTH)):
        problems.append(Problem("width", f"figure is {width:.2f} in wide; draw it at the text width "
                                         f"({TEXT_WIDTH} in) or a column ({COLUMN_WIDTH} in)"))

    drawn_ticks, all_ticks = _drawn_tick_labels(fig), _tick_labels(fig)
    texts = [t for t in _texts(fig) if id(t) not in all_ticks or id(t) in drawn_ticks]

    # font sizes at the printed width
    scale = print_width(fig) / width
    small = [(t.get_fontsize() * scale, t) for t in texts if t.get_fontsize() * scale < MIN_FONT_PT - 1e-6]
    if small:
        size, t = min(small, key=lambda s: s[0])
        problems.append(Problem("font-size", f"{len(small)} text(s) under {MIN_FONT_PT:g} pt at the printed width "
                                             f"({print_width(fig):.2f} in), smallest {size:.1f} pt: {_describe(t)}"))

    # text inside the canvas
    canvas = fig.bbox
    for t in texts:
        box = t.get_window_extent(renderer)
        if not np.isfinite([box.x0, box.x1, box.y0, box.y1]).all():
            continue
        if (box.x0 < canvas.x0 - tol or box.y0 < canvas.y0 - tol or box.x1 > canvas.x1 + tol
                or box.y1 > canvas.y1 + tol):
            problems.append(Problem("text-outside", f"text {_describe(t)} leaves the canvas "
                                                    f"({box.x0:.0f}..{box.x1:.0f} x {box.y0:.0f}..{box.y1:.0f} px "
                                                    f"on a {canvas.width:.0f} x {canvas.height:.0f} canvas)"))

    # texts apart
    boxes = [(t, b) for t in texts for b in [t.get_window_extent(renderer)]
             if np.isfinite([b.x0, b.x1, b.y0, b.y1]).all() and b.width > 0 and b.height > 0]
    if boxes:
        ext = np.array([[b.x0, b.y0, b.x1, b.y1] for _, b in boxes])
        w = np.minimum(ext[:, None, 2], ext[None, :, 2]) - np.maximum(ext[:, None, 0], ext[None, :, 0])
        h = np.minimum(ext[:, None, 3], ext[None, :, 3]) - np.maximum(ext[:, None, 1], ext[None, :, 1])
        pairs = [(i, j) for i, j in np.argwhere(np.triu((w > tol) & (h > tol), k=1))
                 if _rotated_overlap(boxes[i][0], boxes[j][0], renderer, tol)]
        for i, j in pairs[:5]:
            problems.append(Problem("text-overlap", f"text {_describe(boxes[i][0])} overlaps "
                                                    f"{_describe(boxes[j][0])}"))
        if len(pairs) > 5:
            problems.append(Problem("text-overlap", f"... and {len(pairs) - 5} more overlapping pairs of texts"))

    # legends off the data
    for lg in _legends(fig):
        box = lg.get_window_extent(renderer)
        box = Bbox.from_extents(box.x0 + tol, box.y0 + tol, box.x1 - tol, box.y1 - tol)
        for i, ax in enumerate(fig.axes):
            if not ax.get_visible() or _is_colorbar(ax):
                continue
            clip = Bbox.intersection(box, ax.bbox)
            if clip is None or clip.width <= 0 or clip.height <= 0:
                continue
            hits = [a for a in _data_artists(ax) if _overlaps(a, clip, renderer)]
            if hits:
                kinds = sorted({type(a).__name__ for a in hits})
                problems.append(Problem("legend-overlap", f"legend ({_describe(lg.texts[0]) if lg.texts else ''}...) "
                                                          f"covers data of panel {i} ({', '.join(kinds)})"))

    # unique panel letters
    letters: dict[str, int] = {}
    for t in texts:
        m = _LETTER.match(t.get_text())
        if m and (t.get_gid() == PANEL_LETTER_GID or t.axes is not None and t in _titles(t.axes)):
            letters[m.group(1)] = letters.get(m.group(1), 0) + 1
    repeated = sorted(k for k, n in letters.items() if n > 1)
    if repeated:
        problems.append(Problem("panel-letters", f"panel letter(s) used more than once: "
                                                 f"{', '.join(f'({k})' for k in repeated)}"))

    # no empty panel without its reason
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or _is_colorbar(ax):
            continue
        if _data_artists(ax, references=False):
            continue
        if any(t.get_gid() == NOT_BUILT_GID and t.get_visible() for t in ax.texts):
            continue
        title = ax.get_title() or ax.get_title("left")
        problems.append(Problem("empty-axes", f"panel {i}{f' ({title!r})' if title else ''} has no data; draw "
                                              "repro.figures.style.not_built(ax, why) instead"))

    # n beside the intervals
    if uncertainty(fig) == DRAWN and not any(N_TEXT.search(t.get_text()) for t in texts):
        problems.append(Problem("uncertainty-n", "the figure draws error bars or bands but no text gives n "
                                                 "('n = <count> <units>' in a legend title or label, a panel "
                                                 "title or an annotation), counted from the table it plots"))
    return problems


def _corners(t: Text, renderer) -> np.ndarray:
    """The four corners (display coordinates) of a text's own rectangle, rotated as drawn."""
    box = t.get_window_extent(renderer)
    angle = t.get_rotation()
    if angle % 90 == 0:
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    t.set_rotation(0)  # the unrotated size; the rotated rectangle shares the bounding box's centre
    try:
        flat = t.get_window_extent(renderer)
    finally:
        t.set_rotation(angle)
    a = np.deg2rad(angle)
    u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    c = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])
    hw, hh = flat.width / 2, flat.height / 2
    return np.array([c - hw * u - hh * v, c + hw * u - hh * v, c + hw * u + hh * v, c - hw * u + hh * v])


def _rotated_overlap(a: Text, b: Text, renderer, tol: float) -> bool:
    """Whether two texts' rotated rectangles overlap by more than ``tol`` (separating axis test)."""
    if a.get_rotation() % 90 == 0 and b.get_rotation() % 90 == 0:
        return True  # their bounding boxes are the rectangles: already known to overlap
    pa, pb = _corners(a, renderer), _corners(b, renderer)
    for poly in (pa, pb):
        for k in range(2):
            edge = poly[k + 1] - poly[k]
            axis = np.array([-edge[1], edge[0]]) / (np.hypot(*edge) or 1.0)
            qa, qb = pa @ axis, pb @ axis
            if min(qa.max(), qb.max()) - max(qa.min(), qb.min()) <= tol:
                return False
    return True


def _titles(ax) -> list[Text]:
    return [ax.title, ax._left_title, ax._right_title]


def _handle_colour(handle) -> str | None:
    try:
        if isinstance(handle, Line2D):
            c = handle.get_color()
        elif isinstance(handle, Patch):
            c = handle.get_facecolor()
            if c[3] == 0:
                c = handle.get_edgecolor()
        elif isinstance(handle, Collection):
            fc = handle.get_facecolor()
            c = fc[0] if len(fc) and fc[0][3] > 0 else handle.get_edgecolor()[0]
        else:
            return None
        return to_hex(c, keep_alpha=False)
    except (IndexError, ValueError):
        return None


def check_colours(figures: Mapping[str, plt.Figure]) -> list[Problem]:
    """One colour per legend label across ``figures`` (a paper's figures, by name)."""
    seen: dict[str, dict[str, list[str]]] = {}
    for name, fig in figures.items():
        for lg in _legends(fig):
            for handle, text in zip(lg.legend_handles, lg.texts):
                colour = _handle_colour(handle)
                if colour is not None:
                    seen.setdefault(text.get_text(), {}).setdefault(colour, []).append(name)
    problems = []
    for label, colours in sorted(seen.items()):
        if len(colours) > 1:
            where = "; ".join(f"{c} in {', '.join(sorted(set(f)))}" for c, f in sorted(colours.items()))
            problems.append(Problem("colour", f"{label!r} is drawn in {len(colours)} colours: {where}"))
    return problems


def pdf_keywords(uncertainty_state: str) -> str:
    """The PDF Keywords that record a figure's :func:`uncertainty` (written by :func:`repro.figures.style.save`)."""
    if uncertainty_state not in (DRAWN, MISSING, NONE):
        raise ValueError(f"uncertainty is {DRAWN!r}, {MISSING!r} or {NONE!r}; got {uncertainty_state!r}")
    return f"uncertainty: {uncertainty_state}"


def recorded_uncertainty(pdf: str | os.PathLike) -> str | None:
    """What the figure PDF ``pdf`` records of its :func:`uncertainty`; None if it records nothing."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        keywords = doc.get_metadata_dict().get("Keywords", "")
    finally:
        doc.close()
    m = _KEYWORD.search(keywords)
    return m.group(1) if m else None


def check_captions(reports: str | os.PathLike, captions: str | os.PathLike) -> list[Problem]:
    """Every figure PDF in ``reports`` against its caption ``captions/<stem>.rst`` (rule ``caption-uncertainty``).

    A figure that draws uncertainty needs a caption sentence beginning ``Error bars:`` or ``Bands:``; one
    that draws none must not have one (it would describe bars the reader cannot see). A figure whose every
    interval is missing at this scale (each point over one unit) may have the sentence or not: the caption
    is shared by every scale. A PDF that records nothing, or has no caption, is a problem too.
    """
    reports, captions = Path(reports), Path(captions)
    problems = []
    for pdf in sorted(reports.glob("*.pdf")):
        state = recorded_uncertainty(pdf)
        caption = captions / f"{pdf.stem}.rst"
        if state is None:
            problems.append(Problem("caption-uncertainty", f"{pdf.name} records no uncertainty in its Keywords "
                                                           "(not written by repro.figures.style.save?)"))
            continue
        if not caption.is_file():
            problems.append(Problem("caption-uncertainty", f"{pdf.name} has no caption {caption}"))
            continue
        says = bool(CAPTION_SENTENCE.search(caption.read_text()))
        if state == DRAWN and not says:
            problems.append(Problem("caption-uncertainty", f"{pdf.name} draws error bars or bands, but its caption "
                                                           f"{caption.name} has no 'Error bars:' or 'Bands:' "
                                                           "sentence saying what they are, over which units"))
        elif state == NONE and says:
            problems.append(Problem("caption-uncertainty", f"{pdf.name} draws no error bars or bands, but its "
                                                           f"caption {caption.name} describes some"))
    return problems


def assert_clean(fig: plt.Figure, name: str = "figure") -> None:
    """Raise a ``ValueError`` listing the problems of ``fig``, if any."""
    problems = check(fig)
    if problems:
        raise ValueError(f"{name} fails the figure lint:\n" + "\n".join(map(str, problems)))
