"""Whole-slide reading on OpenSlide: physical resolution, level choice, clear errors.

:func:`open_slide` wraps ``openslide.OpenSlide`` in a :class:`Slide` that knows its resolution in
micrometres per pixel (mpp) and chooses pyramid levels by a target mpp or magnification.

Missing mpp (e.g. the reduced TCGA fixture): the slide's ``mpp`` comes, in order, from OpenSlide's
``openslide.mpp-x``/``mpp-y``, from the objective power (``openslide.objective-power``, else the
vendor's own ``aperio.AppMag`` or ``hamamatsu.SourceLens``) as ``10 / power`` um/px (the usual
convention: 0.25 at 40x, 0.5 at 20x; the CMU fixture, which records both, has 0.499 at 20x), and
otherwise from ``default_mpp`` when the caller configures one (each fallback logs a WARNING naming
the file and the assumed value). With no fallback configured, :attr:`Slide.mpp` is ``None`` and any
request for a physical size (:meth:`Slide.require_mpp`) raises a ``ValueError`` naming the file,
the setting ``wsi.<scale>.reader.default_mpp`` and its usual values.

Errors: a missing file is ``FileNotFoundError``; a file OpenSlide cannot open (truncated,
unsupported format) or a tile that fails to decode is an ``OSError`` naming the file. Pipeline
steps write their outputs atomically, so a slide that fails leaves nothing behind.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

__all__ = ["Slide", "open_slide", "mpp_from_objective"]

log = logging.getLogger(__name__)

#: properties that record the scan's objective power, in the order they are trusted
OBJECTIVE_POWER_PROPERTIES = ("openslide.objective-power", "aperio.AppMag", "hamamatsu.SourceLens")


def mpp_from_objective(power: float) -> float:
    """Micrometres per pixel of a scan at objective ``power`` by the usual 10 um / power convention."""
    return 10.0 / float(power)


class Slide:
    """An open whole-slide image with its resolution (use :func:`open_slide`)."""

    def __init__(self, path: str | os.PathLike, *, default_mpp: float | None = None) -> None:
        import openslide

        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"slide {self.path} does not exist")
        try:
            self._osr = openslide.OpenSlide(str(self.path))
        except openslide.OpenSlideUnsupportedFormatError as err:
            raise OSError(f"slide {self.path}: unsupported or unreadable format ({err})") from err
        except openslide.OpenSlideError as err:
            raise OSError(f"slide {self.path}: OpenSlide cannot open it, truncated or corrupt? ({err})") from err
        _check_tiff_extent(self.path)
        props = self._osr.properties
        self.properties: dict[str, str] = dict(props)
        self.vendor = props.get("openslide.vendor", "unknown")
        self.objective_power = next((p for p in map(_float, map(props.get, OBJECTIVE_POWER_PROPERTIES)) if p), None)
        mx, my = _float(props.get("openslide.mpp-x")), _float(props.get("openslide.mpp-y"))
        if mx and my:
            self.mpp, self.mpp_source = (mx + my) / 2.0, "openslide.mpp"
        elif self.objective_power:
            self.mpp, self.mpp_source = mpp_from_objective(self.objective_power), "objective-power"
            log.warning("slide %s has no mpp; assuming %.4g um/px from objective power %gx", self.path, self.mpp,
                        self.objective_power)
        elif default_mpp:
            self.mpp, self.mpp_source = float(default_mpp), "default_mpp"
            log.warning("slide %s has neither mpp nor objective power; assuming the configured default_mpp = %g um/px",
                        self.path, self.mpp)
        else:
            self.mpp, self.mpp_source = None, "none"
        self.dimensions: tuple[int, int] = self._osr.dimensions
        self.level_dimensions: tuple[tuple[int, int], ...] = self._osr.level_dimensions
        self.level_downsamples: tuple[float, ...] = self._osr.level_downsamples
        self.level_count: int = self._osr.level_count

    # ------------------------------------------------------------------ resolution
    def require_mpp(self) -> float:
        """The mpp, or a ``ValueError`` when the slide has none and no fallback is configured."""
        if self.mpp is None:
            raise ValueError(f"slide {self.path} has no mpp and no objective power: a physical size in micrometres "
                             "cannot be used; set wsi.<scale>.reader.default_mpp to the scan's resolution (usually "
                             "0.25 um/px for a 40x scan, 0.5 for 20x, 1.0 for 10x; see docs/stages/wsi.md, 'Slides without mpp')")
        return self.mpp

    def level_mpp(self, level: int) -> float:
        return self.require_mpp() * self.level_downsamples[level]

    def best_level_for_downsample(self, downsample: float, tol: float = 0.02) -> int:
        """The coarsest level whose downsample does not exceed ``downsample`` (within ``tol``)."""
        best = 0
        for k, ds in enumerate(self.level_downsamples):
            if ds <= downsample * (1 + tol):
                best = k
        return best

    def level_for_mpp(self, target_mpp: float, tol: float = 0.02) -> int:
        """The coarsest level at least as fine as ``target_mpp`` (reading there and resizing down
        never upsamples)."""
        return self.best_level_for_downsample(target_mpp / self.require_mpp(), tol)

    def level_for_magnification(self, magnification: float, tol: float = 0.02) -> int:
        """Level by objective magnification (``20`` = 20x, i.e. 0.5 um/px by the 10/power convention)."""
        if self.objective_power:
            return self.best_level_for_downsample(self.objective_power / magnification, tol)
        return self.level_for_mpp(10.0 / magnification, tol)

    # ------------------------------------------------------------------ pixels
    def read_region(self, location: tuple[int, int], level: int, size: tuple[int, int],
                    out_size: int | None = None) -> np.ndarray:
        """RGB uint8 array (h, w, 3) of ``size`` at ``level``; ``location`` in level-0 pixels.

        ``out_size`` resizes the region to ``out_size`` x ``out_size`` (box filter, i.e. area
        averaging) before the array is made. Transparent (outside-the-scan) pixels come back white,
        as on glass.
        """
        import openslide
        from PIL import Image

        try:
            img = self._osr.read_region((int(location[0]), int(location[1])), int(level), (int(size[0]), int(size[1])))
        except openslide.OpenSlideError as err:
            raise OSError(f"slide {self.path}: cannot decode region {location} level {level} ({err})") from err
        if img.mode == "RGBA" and img.getchannel(3).getextrema()[0] < 255:  # some pixels lie outside the scanned area
            white = Image.new("RGBA", img.size, (255, 255, 255, 255))
            img = Image.alpha_composite(white, img)
        img = img.convert("RGB")
        if out_size is not None and img.size != (out_size, out_size):
            factor = img.size[0] // out_size
            if img.size == (factor * out_size, factor * out_size):
                img = img.reduce(factor)  # integer box average, several times faster than resize
            else:
                img = img.resize((out_size, out_size), Image.Resampling.BOX)
        return np.asarray(img)

    def read_level(self, level: int) -> np.ndarray:
        """A whole level as RGB uint8 (meant for low-resolution levels)."""
        return self.read_region((0, 0), level, self.level_dimensions[level])

    def read_at_downsample(self, downsample: float) -> tuple[np.ndarray, float]:
        """The slide at (about) ``downsample``: read the best level, block-average the rest.

        Returns the image and its exact downsample relative to level 0.
        """
        level = self.best_level_for_downsample(downsample)
        img = self.read_level(level)
        factor = max(1, int(round(downsample / self.level_downsamples[level])))
        if factor > 1:
            h, w = img.shape[0] // factor * factor, img.shape[1] // factor * factor
            img = img[:h, :w].reshape(h // factor, factor, w // factor, factor, 3).mean(axis=(1, 3)).round().astype(np.uint8)
        return img, self.level_downsamples[level] * factor

    def thumbnail(self, max_size: int = 1024) -> np.ndarray:
        return np.asarray(self._osr.get_thumbnail((max_size, max_size)).convert("RGB"))

    def close(self) -> None:
        self._osr.close()

    def __enter__(self) -> "Slide":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Slide({str(self.path)!r}, vendor={self.vendor}, dims={self.dimensions}, levels={self.level_count}, mpp={self.mpp})"


def _check_tiff_extent(path: Path) -> None:
    """A TIFF-based slide whose tiles point past the end of the file was cut short: fail now,
    not at the first unlucky read_region (OpenSlide opens such files while their directories are
    intact)."""
    if path.suffix.lower() not in (".svs", ".tif", ".tiff", ".ndpi", ".scn", ".bif", ".svslide"):
        return
    import tifffile

    size = path.stat().st_size
    try:
        with tifffile.TiffFile(path) as tif:
            end = max((int(o) + int(c) for page in tif.pages for o, c in zip(page.dataoffsets, page.databytecounts)),
                      default=0)
    except Exception as err:  # any parse failure of a file OpenSlide opened is corruption
        raise OSError(f"slide {path}: TIFF structure unreadable, truncated or corrupt? ({err})") from err
    if end > size:
        raise OSError(f"slide {path}: truncated ({size} bytes, tiles reach byte {end})")


def _float(value) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out > 0 else None


def open_slide(path: str | os.PathLike, *, default_mpp: float | None = None) -> Slide:
    """Open a whole-slide image (any format OpenSlide reads: Aperio SVS, NDPI, generic tiled TIFF, ...).

    Parameters
    ----------
    path : path-like
        The slide file.
    default_mpp : float, optional
        The resolution to assume when the file has neither mpp nor objective power (logged as a
        warning). Without it such a slide has ``mpp = None`` and physical sizes raise ``ValueError``.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    OSError
        OpenSlide cannot open the file (truncated, corrupt or unsupported); the message names it.
    """
    return Slide(path, default_mpp=default_mpp)
