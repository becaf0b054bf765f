"""Tissue detection at a low-resolution level (CLAM-style segmentation, thresholds in micrometres).

Brightfield (H&E, IHC: stained tissue on bright glass) follows CLAM's
``WholeSlideImage.segmentTissue`` (Lu et al., Nat. Biomed. Eng. 2021): HSV saturation, median blur,
a fixed threshold or Otsu, morphological closing, then drop small tissue components and fill small
holes. Written from the description, not copied.

Fluorescence (signal over a dark background, e.g. DAPI nuclei in the blue channel) cannot use
saturation: a near-black pixel with one non-zero channel (R = G = 0, B = 1) has saturation 255, so
the background looks like the most saturated "tissue" there is. It is segmented on the
**max-channel intensity** instead (whichever channel carries signal or tissue autofluorescence),
with the same median blur, an Otsu threshold computed on log intensity (floored at
``min_intensity``) and the same morphological clean-up. Log, because on a linear scale the
histogram of a section with sparse-nuclei stroma and dense-nuclei tumour has three modes and Otsu
splits the two tissue modes, leaving the stroma as background (seen on the synthetic DAPI slides:
a third of the tissue kept); the dark background is one narrow mode on a log scale. CLAM has no fluorescence path; TRIDENT's default segmenter is a network
trained on H&E (with an Otsu fallback), so this path is the project's own.

``modality: auto`` decides per slide, and logs what it decided and why: first from a vendor
property where one exists (OpenSlide's ``openslide.background-color``, set by a few formats: a
dark background colour means fluorescence), otherwise from the segmentation image itself: the
median of its max-channel intensity is the background level on a slide that is mostly background
and the tissue level on one mostly covered; glass is bright (>= 128) and stained tissue's
brightest channel is too, while a fluorescence slide's background and most of its tissue are dark.

A blank or constant image (all glass, all black, a failed scan) has no threshold to find (Otsu is
undefined on a one-valued histogram): the mask is empty and a WARNING names the slide; nothing
crashes on a NaN.

Choices the spec leaves open
----------------------------
- Segmentation resolution: the slide is read at ``seg_mpp`` um/px (default 4, i.e. CLAM's usual
  level of a 20x slide downsampled 8x), from the coarsest level at least that fine, block-averaged.
- Area thresholds are physical (``min_tissue_area_um2``, ``max_hole_area_um2``), so they scale with
  the slide's mpp: CLAM's pixel-count defaults (a_t = 100 patches of 512^2 at the segmentation level)
  reject every contour of a small real slide such as the CMU fixture.
  With no mpp and no fallback, ``mpp_fallback_for_tissue`` (default 0.5) is used for *segmentation
  only* (a warning is logged): a tissue mask needs no exact physical scale.
- The closing kernel radius is ``close_um`` micrometres (a disk).
- Otsu is computed on the blurred saturation (brightfield) or max-channel intensity (fluorescence)
  of the whole segmentation image; with ``threshold: otsu`` a floor of ``min_saturation`` /
  ``min_intensity`` keeps a blank slide blank. A fixed ``threshold`` applies to whichever signal
  the modality uses.
- Auto modality: median max-channel intensity < 128 (of 255) means fluorescence. A slide more than
  half covered by tissue so dark that its brightest channel is under 128 would be misread; set
  ``modality: brightfield`` for it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from repro.config import from_dict
from repro.wsi.reader import Slide

__all__ = ["MODALITIES", "TissueConfig", "TissueMask", "detect_modality", "detect_tissue", "segment_rgb"]

log = logging.getLogger(__name__)

MODALITIES = ("auto", "brightfield", "fluorescence")
#: median max-channel intensity (0..255) below which ``auto`` calls a slide fluorescence
DARK_BACKGROUND = 128.0


@dataclass(frozen=True)
class TissueConfig:
    """Tissue-detection settings (config.yaml ``wsi.<scale>.tissue``)."""

    #: "auto" (decide per slide), "brightfield" (saturation) or "fluorescence" (max-channel intensity)
    modality: str = "auto"
    #: micrometres per pixel of the segmentation image
    seg_mpp: float = 4.0
    #: median-filter size in pixels at the segmentation level (CLAM mthresh = 7)
    median: int = 7
    #: "otsu" or a saturation threshold 0..255 (CLAM sthresh = 8)
    threshold: str | int = "otsu"
    #: lower bound on the Otsu threshold, so glass-only images stay empty
    min_saturation: int = 8
    #: fluorescence: lower bound on the Otsu threshold of max-channel intensity (dark noise)
    min_intensity: int = 8
    #: closing disk radius in micrometres
    close_um: float = 16.0
    #: tissue components smaller than this are dropped (um^2; 0.01 mm^2 by default)
    min_tissue_area_um2: float = 10000.0
    #: holes smaller than this are filled (um^2)
    max_hole_area_um2: float = 4000.0
    #: mpp assumed *for segmentation only* when the slide has none
    mpp_fallback_for_tissue: float = 0.5

    def __post_init__(self) -> None:
        if self.modality not in MODALITIES:
            raise ValueError(f"wsi.<scale>.tissue.modality: {self.modality!r} is not one of {MODALITIES}")


@dataclass
class TissueMask:
    """A boolean tissue mask and where it sits on the slide."""

    mask: np.ndarray  # (h, w) bool at the segmentation resolution
    downsample: float  # level-0 pixels per mask pixel
    threshold: float  # the threshold applied (saturation or max-channel intensity, 0..255)
    seg_mpp: float  # um per mask pixel (from the slide's mpp or the fallback)
    modality: str = "brightfield"  # the modality segmented (auto resolved)

    def fraction_in_boxes(self, xy: np.ndarray, size0: float) -> np.ndarray:
        """Tissue fraction of each level-0 box (x, y, size0 x size0), from an integral image."""
        m = self.mask.astype(np.float64)
        ii = np.zeros((m.shape[0] + 1, m.shape[1] + 1))
        ii[1:, 1:] = m.cumsum(0).cumsum(1)
        h, w = m.shape
        x0 = np.clip(np.round(xy[:, 0] / self.downsample).astype(int), 0, w)
        y0 = np.clip(np.round(xy[:, 1] / self.downsample).astype(int), 0, h)
        x1 = np.clip(np.round((xy[:, 0] + size0) / self.downsample).astype(int), 0, w)
        y1 = np.clip(np.round((xy[:, 1] + size0) / self.downsample).astype(int), 0, h)
        area = np.maximum((x1 - x0) * (y1 - y0), 1)
        full = (size0 / self.downsample) ** 2  # a box partly outside the slide counts as glass outside
        s = ii[y1, x1] - ii[y0, x1] - ii[y1, x0] + ii[y0, x0]
        return s / np.maximum(full, area)


def _saturation(rgb: np.ndarray) -> np.ndarray:
    """HSV saturation scaled to 0..255 (max - min) / max, as OpenCV's 8-bit HSV."""
    x = rgb.astype(np.float32)
    mx, mn = x.max(axis=-1), x.min(axis=-1)
    return np.where(mx > 0, 255.0 * (mx - mn) / np.maximum(mx, 1e-6), 0.0)


_LOG_SCALE = 255.0 / np.log1p(255.0)  # log1p(0..255) onto 0..255 bins


def _max_channel(rgb: np.ndarray) -> np.ndarray:
    return rgb.max(axis=-1).astype(np.float32)


def _otsu(values: np.ndarray) -> float | None:
    """Otsu's threshold of 0..255 values; ``None`` when fewer than two histogram bins are occupied
    (a constant image has no threshold)."""
    hist, _ = np.histogram(values, bins=256, range=(0, 256))
    if np.count_nonzero(hist) < 2:
        return None
    p = hist.astype(np.float64) / hist.sum()
    omega, mu = np.cumsum(p), np.cumsum(p * np.arange(256))
    with np.errstate(divide="ignore", invalid="ignore"):
        between = (mu[-1] * omega - mu) ** 2 / (omega * (1 - omega))
    between[~np.isfinite(between)] = -1.0  # omega = 0 or 1: one class empty
    return float(np.argmax(between)) + 0.5  # threshold between bins k and k+1


def _disk(radius: int) -> np.ndarray:
    r = max(int(radius), 0)
    y, x = np.ogrid[-r : r + 1, -r : r + 1]
    return x * x + y * y <= r * r


def _background_color_modality(props) -> tuple[str, str] | None:
    """Fluorescence or brightfield from ``openslide.background-color`` (RRGGBB), when the vendor set it."""
    value = (props or {}).get("openslide.background-color")
    try:
        rgb = [int(value[k : k + 2], 16) for k in (0, 2, 4)]
    except (TypeError, ValueError):
        return None
    modality = "fluorescence" if max(rgb) < DARK_BACKGROUND else "brightfield"
    return modality, f"vendor property openslide.background-color = {value}"


def detect_modality(rgb: np.ndarray, properties=None) -> tuple[str, str]:
    """``(modality, reason)``: from a vendor property where one exists, else from ``rgb`` (the
    segmentation image): median max-channel intensity below :data:`DARK_BACKGROUND` = fluorescence."""
    from_vendor = _background_color_modality(properties)
    if from_vendor:
        return from_vendor
    level = float(np.median(_max_channel(rgb))) if rgb.size else 255.0
    modality = "fluorescence" if level < DARK_BACKGROUND else "brightfield"
    return modality, f"median max-channel intensity {level:.0f} of 255 ({'dark' if modality == 'fluorescence' else 'bright'} background)"


def segment_rgb(rgb: np.ndarray, seg_mpp: float, cfg: TissueConfig, *, modality: str | None = None,
                name: str = "image") -> tuple[np.ndarray, float]:
    """The tissue mask of an RGB image whose pixels are ``seg_mpp`` um wide; returns (mask, threshold).

    ``modality`` (default ``cfg.modality``; ``auto`` is decided from ``rgb``) picks the signal:
    saturation (brightfield) or max-channel intensity (fluorescence). A constant signal gives an
    empty mask, the floor as threshold, and a WARNING naming ``name``.
    """
    modality = modality or cfg.modality
    if modality == "auto":
        modality, _ = detect_modality(rgb)
    if modality == "fluorescence":
        raw, floor, what = _max_channel(rgb), float(cfg.min_intensity), "max-channel intensity"
    elif modality == "brightfield":
        raw, floor, what = _saturation(rgb), float(cfg.min_saturation), "saturation"
    else:
        raise ValueError(f"wsi.<scale>.tissue.modality: {modality!r} is not one of {MODALITIES}")
    sig = ndimage.median_filter(raw, size=cfg.median, mode="nearest")
    if sig.size == 0 or float(sig.max()) == float(sig.min()):
        value = float(sig.flat[0]) if sig.size else float("nan")
        log.warning("%s: blank image: its %s is constant (%.0f) at %.3g um/px, so no tissue can be told from "
                    "background; the tissue mask is empty", name, what, value, seg_mpp)
        return np.zeros(sig.shape, dtype=bool), floor
    if cfg.threshold == "otsu" and modality == "fluorescence":
        # Otsu on log intensity: fluorescence is multiplicative (stain amount x exposure), and on a
        # linear scale Otsu splits sparse-nuclei tissue from dense-nuclei tissue instead of tissue
        # from the narrow dark background mode.
        otsu = _otsu(_LOG_SCALE * np.log1p(sig))
        thr = floor if otsu is None else max(float(np.expm1(otsu / _LOG_SCALE)), floor)
    elif cfg.threshold == "otsu":
        otsu = _otsu(sig)
        thr = floor if otsu is None else max(otsu, floor)
    else:
        thr = float(cfg.threshold)
    mask = sig > thr
    rad = int(round(cfg.close_um / seg_mpp))
    if rad > 0:
        # Pad before closing so tissue touching the border is not eroded away.
        mask = ndimage.binary_closing(np.pad(mask, rad + 1), structure=_disk(rad))[rad + 1 : -rad - 1, rad + 1 : -rad - 1]
    px_area = seg_mpp**2
    lab, n = ndimage.label(mask)
    if n:
        sizes = ndimage.sum_labels(mask, lab, index=np.arange(1, n + 1)) * px_area
        mask = np.isin(lab, 1 + np.flatnonzero(sizes >= cfg.min_tissue_area_um2))
    holes = ndimage.binary_fill_holes(mask) & ~mask
    lab, n = ndimage.label(holes)
    if n:
        sizes = ndimage.sum_labels(holes, lab, index=np.arange(1, n + 1)) * px_area
        mask = mask | np.isin(lab, 1 + np.flatnonzero(sizes < cfg.max_hole_area_um2))
    return mask, thr


def detect_tissue(slide: Slide, cfg: TissueConfig | dict | None = None) -> TissueMask:
    """Detect tissue on ``slide`` at ``cfg.seg_mpp`` um/px.

    Returns
    -------
    TissueMask
        The mask with its downsample (level-0 pixels per mask pixel) and the modality segmented.
        A blank slide gives an empty mask (and a WARNING naming it), not an error.
    """
    cfg = cfg if isinstance(cfg, TissueConfig) else from_dict(TissueConfig, cfg, "wsi.<scale>.tissue")
    mpp = slide.mpp
    if mpp is None:
        mpp = cfg.mpp_fallback_for_tissue
        log.warning("slide %s has no mpp: segmenting tissue as if it were %g um/px (segmentation only)", slide.path, mpp)
    rgb, ds = slide.read_at_downsample(max(cfg.seg_mpp / mpp, 1.0))
    seg_mpp = mpp * ds
    modality = cfg.modality
    if modality == "auto":
        modality, reason = detect_modality(rgb, getattr(slide, "properties", None))
        log.info("slide %s: modality auto -> %s (%s)", slide.path.name, modality, reason)
    mask, thr = segment_rgb(rgb, seg_mpp, cfg, modality=modality, name=f"slide {slide.path}")
    if not mask.any():
        log.warning("slide %s: no tissue found (%s, threshold %.1f); its patch grid will be empty", slide.path,
                    modality, thr)
    log.info("tissue of %s: %.1f %% of the slide at %.3g um/px (downsample %.3g, %s, threshold %.1f)",
             slide.path.name, 100 * mask.mean(), seg_mpp, ds, modality, thr)
    return TissueMask(mask=mask, downsample=float(ds), threshold=thr, seg_mpp=seg_mpp, modality=modality)
