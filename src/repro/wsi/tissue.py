"""Tissue detection at a low-resolution level (CLAM-style segmentation, thresholds in micrometres).

Follows CLAM's ``WholeSlideImage.segmentTissue`` (Lu et al., Nat. Biomed. Eng. 2021): HSV
saturation, median blur, a fixed threshold or Otsu, morphological closing, then drop small tissue
components and fill small holes. Written from the description, not copied.

Choices the spec leaves open
----------------------------
- Segmentation resolution: the slide is read at ``seg_mpp`` um/px (default 4, i.e. CLAM's usual
  level of a 20x slide downsampled 8x), from the coarsest level at least that fine, block-averaged.
- Area thresholds are physical (``min_tissue_area_um2``, ``max_hole_area_um2``), so they scale with
  the slide's mpp: CLAM's pixel-count defaults (a_t = 100 patches of 512^2 at the segmentation level)
  reject every contour of a small real slide such as the CMU fixture (DESIGN.md, Environment facts).
  With no mpp and no fallback, ``mpp_fallback_for_tissue`` (default 0.5) is used for *segmentation
  only* (a warning is logged): a tissue mask needs no exact physical scale.
- The closing kernel radius is ``close_um`` micrometres (a disk).
- Otsu is computed on the blurred saturation of the whole thumbnail; with ``threshold: otsu`` a
  floor of ``min_saturation`` keeps a blank slide blank.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from repro.config import from_dict
from repro.wsi.reader import Slide

__all__ = ["TissueConfig", "TissueMask", "detect_tissue", "segment_rgb"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TissueConfig:
    """Tissue-detection settings (config.yaml ``wsi.<scale>.tissue``)."""

    #: micrometres per pixel of the segmentation image
    seg_mpp: float = 4.0
    #: median-filter size in pixels at the segmentation level (CLAM mthresh = 7)
    median: int = 7
    #: "otsu" or a saturation threshold 0..255 (CLAM sthresh = 8)
    threshold: str | int = "otsu"
    #: lower bound on the Otsu threshold, so glass-only images stay empty
    min_saturation: int = 8
    #: closing disk radius in micrometres
    close_um: float = 16.0
    #: tissue components smaller than this are dropped (um^2; 0.01 mm^2 by default)
    min_tissue_area_um2: float = 10000.0
    #: holes smaller than this are filled (um^2)
    max_hole_area_um2: float = 4000.0
    #: mpp assumed *for segmentation only* when the slide has none
    mpp_fallback_for_tissue: float = 0.5


@dataclass
class TissueMask:
    """A boolean tissue mask and where it sits on the slide."""

    mask: np.ndarray  # (h, w) bool at the segmentation resolution
    downsample: float  # level-0 pixels per mask pixel
    threshold: float  # the saturation threshold applied
    seg_mpp: float  # um per mask pixel (from the slide's mpp or the fallback)

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


def _otsu(values: np.ndarray) -> float:
    hist, edges = np.histogram(values, bins=256, range=(0, 256))
    p = hist.astype(np.float64) / max(hist.sum(), 1)
    omega, mu = np.cumsum(p), np.cumsum(p * np.arange(256))
    with np.errstate(divide="ignore", invalid="ignore"):
        between = (mu[-1] * omega - mu) ** 2 / (omega * (1 - omega))
    return float(np.nanargmax(between)) + 0.5  # threshold between bins k and k+1


def _disk(radius: int) -> np.ndarray:
    r = max(int(radius), 0)
    y, x = np.ogrid[-r : r + 1, -r : r + 1]
    return x * x + y * y <= r * r


def segment_rgb(rgb: np.ndarray, seg_mpp: float, cfg: TissueConfig) -> tuple[np.ndarray, float]:
    """The tissue mask of an RGB image whose pixels are ``seg_mpp`` um wide; returns (mask, threshold)."""
    sat = ndimage.median_filter(_saturation(rgb), size=cfg.median, mode="nearest")
    if cfg.threshold == "otsu":
        thr = max(_otsu(sat), float(cfg.min_saturation))
    else:
        thr = float(cfg.threshold)
    mask = sat > thr
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
        The mask with its downsample (level-0 pixels per mask pixel).
    """
    cfg = cfg if isinstance(cfg, TissueConfig) else from_dict(TissueConfig, cfg, "wsi.<scale>.tissue")
    mpp = slide.mpp
    if mpp is None:
        mpp = cfg.mpp_fallback_for_tissue
        log.warning("slide %s has no mpp: segmenting tissue as if it were %g um/px (segmentation only)", slide.path, mpp)
    rgb, ds = slide.read_at_downsample(max(cfg.seg_mpp / mpp, 1.0))
    seg_mpp = mpp * ds
    mask, thr = segment_rgb(rgb, seg_mpp, cfg)
    log.info("tissue of %s: %.1f %% of the slide at %.3g um/px (downsample %.3g, threshold %.1f)", slide.path.name,
             100 * mask.mean(), seg_mpp, ds, thr)
    return TissueMask(mask=mask, downsample=float(ds), threshold=thr, seg_mpp=seg_mpp)
