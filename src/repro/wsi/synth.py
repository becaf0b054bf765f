"""Synthetic whole-slide cohort: H&E-like pyramidal TIFFs with a ground-truth tissue map and labels.

The embedded default data of the WSI stage (the synthetic cohort of tmevolve's description),
shared by the pathology papers that read its bags or render its slides.
Each slide is drawn procedurally in three steps, all vectorised numpy:

1. **Layout** (:func:`plant_layout`) on a coarse map (one map pixel = ``map_downsample`` level-0
   pixels, 8 um at the defaults): an elliptical tissue piece on glass, a tumour region with a rough
   boundary, necrosis in the tumour core, fat lobules, and lymphocytes split between three places
   (a band along the tumour boundary, clusters infiltrating the tumour, aggregates far from it).
   The *amount* of lymphocytes and *where* they sit are drawn independently, so composition alone
   does not determine the labels: the interaction (interface, infiltration) does.
2. **Rendering** (:func:`render_slide`) at level 0: the map is warped by a smooth displacement field
   so boundaries look organic; nuclei are stamped as anti-aliased ellipses on jittered grids
   (tumour: dense, large, vesicular, with per-subtype morphology; stroma: sparse, elongated,
   aligned with eosin fibres; lymphocytes: small, round, very dark, dense; necrosis: pale, nuclear
   debris; fat: white with thin membranes from a Voronoi tessellation); colour comes from
   Beer-Lambert optical densities with the Ruifrok-Johnston haematoxylin and eosin vectors.
   With ``modality: fluorescence`` the same layout and nuclei are rendered as a DAPI-like
   fluorescence scan instead: black glass (a camera offset of a few counts), nuclei bright in the
   blue channel, a faint non-specific signal over cellular tissue (none over fat), red and green
   zero. It plants the case that breaks saturation-based tissue detection (a near-black pixel with
   B > 0 has saturation 255).
3. **Writing** (:func:`write_pyramid_tiff`): a tiled pyramidal TIFF with JPEG tiles, resolution
   tags and an Aperio-style ImageDescription (``AppMag``, ``MPP``), which OpenSlide opens as vendor
   ``aperio`` with every level, objective power and mpp.

Labels (:func:`plant_labels`) are planted from the layout:

- survival: exponential times with log-hazard ``-b_int * z(log interface length) - b_inf *
  z(infiltration)`` (z = standardised over the cohort), independent exponential censoring whose
  rate is solved so that the expected censored fraction equals ``censor_rate`` (about 30 %);
- subtype: the tumour morphology drawn for the slide (solid, glandular, pleomorphic);
- gene expression (a CD8A stand-in): ``6 + gene_effect * z(lymphocyte density inside the tumour
  boundary) + N(0, gene_noise)``.

Choices the spec leaves open
----------------------------
- Tissue-type ids: 0 background, 1 tumour, 2 stroma, 3 lymphocytes, 4 necrosis, 5 fat.
- Interface length: the number of 4-neighbour map-pixel edges between tumour and lymphocytes, in
  micrometres; infiltration: the fraction of the tumour region (before infiltrates are planted)
  occupied by lymphocytes. Both are written to the manifest as ``interface_um`` and
  ``infiltration``.
- Slide ``i`` of a cohort depends only on the seed and ``i`` (not on the cohort size); labels are
  standardised over the cohort, so they depend on the cohort as a whole.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import ndimage

from repro.config import from_dict
from repro.io import atomic_path
from repro.wsi.cohort import slide_ids

__all__ = ["TISSUE_TYPES", "SUBTYPES", "SynthConfig", "plant_layout", "render_slide",
           "write_pyramid_tiff", "plant_labels", "generate_slide", "generate_cohort"]

log = logging.getLogger(__name__)

TISSUE_TYPES = ("background", "tumour", "stroma", "lymphocytes", "necrosis", "fat")
BACKGROUND, TUMOUR, STROMA, LYMPH, NECROSIS, FAT = range(6)
SUBTYPES = ("solid", "glandular", "pleomorphic")

# Ruifrok & Johnston (2001) stain optical-density vectors (R, G, B), unit length.
_H_OD = np.array([0.650, 0.704, 0.286], dtype=np.float32)
_E_OD = np.array([0.072, 0.990, 0.105], dtype=np.float32)
# Eosin (cytoplasm / matrix) optical density per tissue type.
_EOSIN = np.array([0.0, 0.42, 0.80, 0.22, 0.50, 0.0], dtype=np.float32)


@dataclass(frozen=True)
class SynthConfig:
    """Size and label model of a synthetic cohort (presets in config.yaml, ``wsi.<scale>.synthetic``)."""

    n_slides: int = 150
    #: "brightfield" (H&E) or "fluorescence" (DAPI-like nuclei in the blue channel on black)
    modality: str = "brightfield"
    #: level-0 side in pixels; a multiple of ``map_downsample``
    size: int = 2688
    #: micrometres per level-0 pixel (0.5 = an Aperio 20x scan)
    mpp: float = 0.5
    objective_power: int = 20
    #: level-0 pixels per ground-truth map pixel (8 um at 0.5 mpp: about one cell)
    map_downsample: int = 16
    tile: int = 256
    jpeg_quality: int = 90
    #: pyramid levels are halved until the smaller side is at most this
    min_level_size: int = 512
    censor_rate: float = 0.3
    median_survival_months: float = 30.0
    #: log-hazard change per sd of log interface length / infiltration (negative effect: protective)
    hazard_interface: float = 0.9
    hazard_infiltration: float = 0.6
    gene_effect: float = 1.2
    gene_noise: float = 0.5

    def __post_init__(self) -> None:
        if self.modality not in ("brightfield", "fluorescence"):
            raise ValueError(f"wsi synthetic config: modality {self.modality!r} is not brightfield or fluorescence")
        if self.size % self.map_downsample:
            raise ValueError(f"wsi synthetic config: size {self.size} is not a multiple of map_downsample {self.map_downsample}")


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, ...], sigma: float | tuple[float, ...]) -> np.ndarray:
    """Gaussian-filtered white noise, standardised to mean 0 and sd 1."""
    z = ndimage.gaussian_filter(rng.standard_normal(shape).astype(np.float32), sigma, mode="wrap")
    return (z - z.mean()) / (z.std() + 1e-8)


def _top_fraction(score: np.ndarray, allowed: np.ndarray, n: int) -> np.ndarray:
    """Boolean mask of the ``n`` allowed pixels with the highest score."""
    out = np.zeros(score.shape, dtype=bool)
    idx = np.flatnonzero(allowed)
    n = int(min(max(n, 0), idx.size))
    if n:
        pick = idx[np.argpartition(-score.ravel()[idx], n - 1)[:n]]
        out.ravel()[pick] = True
    return out


def _largest_component(mask: np.ndarray) -> np.ndarray:
    lab, n = ndimage.label(mask)
    if n <= 1:
        return mask
    sizes = ndimage.sum_labels(mask, lab, index=np.arange(1, n + 1))
    return lab == (1 + int(np.argmax(sizes)))


def plant_layout(rng: np.random.Generator, m: int) -> dict[str, Any]:
    """Draw one slide's tissue layout on an ``m`` x ``m`` map.

    Returns
    -------
    dict with ``type_map`` (uint8, ids of :data:`TISSUE_TYPES`), ``tumour_region`` (bool, the tumour
    before infiltrates were planted), ``subtype`` (int) and the fractions drawn.
    """
    yy, xx = (np.mgrid[0:m, 0:m].astype(np.float32) + 0.5) / m
    # Tissue: a noisy ellipse on glass, one connected piece without holes.
    cy, cx = rng.uniform(0.42, 0.58, size=2)
    ay, ax = rng.uniform(0.30, 0.44, size=2)
    th = rng.uniform(0, np.pi)
    u = ((xx - cx) * np.cos(th) + (yy - cy) * np.sin(th)) / ax
    v = (-(xx - cx) * np.sin(th) + (yy - cy) * np.cos(th)) / ay
    field = 1.0 - np.sqrt(u**2 + v**2) + 0.18 * _smooth_noise(rng, (m, m), m / 12)
    tissue = ndimage.binary_fill_holes(_largest_component(field > 0))
    n_tissue = int(tissue.sum())

    # Tumour: the top fraction of a centre-biased rough field, holes filled.
    idx = np.flatnonzero(tissue & (field > np.quantile(field[tissue], 0.5)))
    ty, tx = np.unravel_index(rng.choice(idx), (m, m))
    roughness = rng.uniform(0.15, 0.9)
    dist_c = np.hypot(yy - (ty + 0.5) / m, xx - (tx + 0.5) / m)
    score = -dist_c / 0.15 + roughness * _smooth_noise(rng, (m, m), rng.uniform(1.5, 4.0))
    tumour_frac = rng.uniform(0.22, 0.42)
    tumour = _top_fraction(score, tissue, int(tumour_frac * n_tissue))
    tumour = ndimage.binary_fill_holes(tumour) & tissue
    tumour_region = tumour.copy()
    n_tumour = int(tumour.sum())

    tmap = np.where(tissue, STROMA, BACKGROUND).astype(np.uint8)
    tmap[tumour] = TUMOUR
    d_in = ndimage.distance_transform_edt(tumour)
    d_out = ndimage.distance_transform_edt(~tumour)

    # Necrosis: the tumour core.
    necrosis_frac = rng.uniform(0.0, 0.12)
    nec = _top_fraction(d_in / (d_in.max() + 1e-6) + 0.3 * _smooth_noise(rng, (m, m), 2.0), tumour & (d_in > 3),
                        int(necrosis_frac * n_tumour))
    tmap[nec] = NECROSIS

    # Fat lobules: away from the tumour.
    fat_frac = rng.uniform(0.0, 0.10)
    fat = _top_fraction(_smooth_noise(rng, (m, m), m / 25), tissue & (d_out > 4), int(fat_frac * n_tissue))
    tmap[fat] = FAT

    # Lymphocytes: the amount and the placement are drawn independently.
    lymph_frac = rng.uniform(0.06, 0.18)
    n_lymph = int(lymph_frac * n_tissue)
    w_border, w_infil, w_agg = rng.dirichlet([1.0, 1.0, 1.0])
    band = rng.uniform(3.0, 7.0)
    stroma = tmap == STROMA
    hf = _smooth_noise(rng, (m, m), 1.2)
    border = _top_fraction(-d_out / band + 0.6 * hf, stroma & (d_out <= band + 1), int(w_border * n_lymph))
    infil = _top_fraction(hf + 0.5 * _smooth_noise(rng, (m, m), 3.0), tmap == TUMOUR,
                          int(min(w_infil * n_lymph, 0.4 * n_tumour)))
    tmap[border | infil] = LYMPH
    n_left = n_lymph - int(border.sum()) - int(infil.sum())
    agg = _top_fraction(_smooth_noise(rng, (m, m), 5.0), (tmap == STROMA) & (d_out > 2 * band + 2), n_left)
    tmap[agg] = LYMPH
    subtype = int(rng.integers(len(SUBTYPES)))
    return {"type_map": tmap, "tumour_region": tumour_region, "subtype": subtype,
            "lymph_frac_drawn": lymph_frac, "placement": (w_border, w_infil, w_agg)}


def layout_summary(type_map: np.ndarray, tumour_region: np.ndarray, um_per_map_px: float) -> dict[str, float]:
    """The planted quantities the labels are made from (and diagnostics)."""
    t, ly = type_map == TUMOUR, type_map == LYMPH
    edges = int((t[:, 1:] & ly[:, :-1]).sum() + (ly[:, 1:] & t[:, :-1]).sum()
                + (t[1:, :] & ly[:-1, :]).sum() + (ly[1:, :] & t[:-1, :]).sum())
    tissue = type_map != BACKGROUND
    out = {"interface_um": edges * um_per_map_px,
           "infiltration": float(ly[tumour_region].mean()) if tumour_region.any() else 0.0,
           "tissue_area_mm2": float(tissue.sum()) * (um_per_map_px / 1000.0) ** 2}
    for k, name in enumerate(TISSUE_TYPES[1:], start=1):
        out[f"frac_{name}"] = float((type_map[tissue] == k).mean())
    return out


# --------------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------------

def _upsample(a: np.ndarray, factor: int, shape: tuple[int, int]) -> np.ndarray:
    """Bilinear upsampling of a small float field to ``shape``."""
    out = ndimage.zoom(a, factor, order=1, mode="nearest", grid_mode=True)
    return out[: shape[0], : shape[1]]


def _jittered_grid(rng: np.random.Generator, shape: tuple[int, int], spacing: float, jitter: float = 0.35):
    ny, nx = int(shape[0] / spacing) + 1, int(shape[1] / spacing) + 1
    gy, gx = np.mgrid[0:ny, 0:nx].astype(np.float32)
    gy = (gy + 0.5 + rng.uniform(-jitter, jitter, gy.shape)) * spacing
    gx = (gx + 0.5 + rng.uniform(-jitter, jitter, gx.shape)) * spacing
    keep = (gy < shape[0]) & (gx < shape[1])
    return gy[keep], gx[keep]


def _stamp(ink: np.ndarray, cy, cx, a, b, theta, value, *, rim: float = 0.0, chunk: int = 4096) -> None:
    """Add anti-aliased filled ellipses to the flat-indexable 2-D ``ink`` array (vectorised).

    ``rim`` > 0 makes the centre lighter than the edge (a vesicular nucleus).
    """
    if len(cy) == 0:
        return
    h, w = ink.shape
    r = int(np.ceil(np.max(a))) + 2
    oy, ox = np.mgrid[-r : r + 1, -r : r + 1].astype(np.float32)
    flat = ink.reshape(-1)
    for s in range(0, len(cy), chunk):
        sl = slice(s, s + chunk)
        iy, ix = np.round(cy[sl]).astype(np.int64), np.round(cx[sl]).astype(np.int64)
        dy = oy[None] + (iy - cy[sl])[:, None, None]
        dx = ox[None] + (ix - cx[sl])[:, None, None]
        c, sn = np.cos(theta[sl])[:, None, None], np.sin(theta[sl])[:, None, None]
        aa, bb = a[sl][:, None, None], b[sl][:, None, None]
        q = np.sqrt(((dx * c + dy * sn) / aa) ** 2 + ((-dx * sn + dy * c) / bb) ** 2)  # 1 on the boundary
        alpha = np.clip((1.0 - q) * bb + 0.5, 0.0, 1.0)
        if rim:
            alpha = alpha * (1.0 - rim + rim * np.clip(q, 0.0, 1.0))
        val = alpha * value[sl][:, None, None]
        py, px = iy[:, None, None] + oy[None].astype(np.int64), ix[:, None, None] + ox[None].astype(np.int64)
        ok = (val > 0.01) & (py >= 0) & (py < h) & (px >= 0) & (px < w)
        flat += np.bincount((py * w + px)[ok], weights=val[ok], minlength=h * w).astype(flat.dtype)


def _nuclei(rng, T, t, spacing, keep, a, b, theta, dark, *, rim=0.0, ink=None, exclude=None):
    """Nuclei on a jittered grid over the pixels of type ``t``; sizes drawn by the callables."""
    gy, gx = _jittered_grid(rng, T.shape, spacing)
    iy, ix = gy.astype(np.int64), gx.astype(np.int64)
    sel = (T[iy, ix] == t) & (rng.random(gy.shape) < keep)
    if exclude is not None:
        sel &= ~exclude[iy, ix]
    gy, gx = gy[sel], gx[sel]
    n = len(gy)
    aa = a(n)
    _stamp(ink, gy, gx, aa, b(aa), theta(n), dark(n), rim=rim)


def render_slide(rng: np.random.Generator, type_map: np.ndarray, subtype: int, cfg: SynthConfig) -> np.ndarray:
    """Draw the level-0 RGB image (uint8, H x W x 3) of a layout."""
    m, D = type_map.shape[0], cfg.map_downsample
    H = W = m * D
    px_um = cfg.mpp  # sizes below are in micrometres, converted to pixels with s()
    s = lambda um: um / px_um

    # Warp the map so boundaries are organic, then look the type up per pixel.
    amp = 0.9 * D
    wy = _upsample(_smooth_noise(rng, (m, m), 1.5) * amp, D, (H, W))
    wx = _upsample(_smooth_noise(rng, (m, m), 1.5) * amp, D, (H, W))
    iy = np.clip(((np.arange(H, dtype=np.float32)[:, None] + wy) / D).astype(np.int32), 0, m - 1)
    ix = np.clip(((np.arange(W, dtype=np.float32)[None, :] + wx) / D).astype(np.int32), 0, m - 1)
    T = type_map[iy, ix]
    del wy, wx, iy, ix

    # Eosin: per-type base, cell-scale texture, stromal fibres, pale mottled necrosis.
    q = 4
    tex = _upsample(_smooth_noise(rng, (H // q, W // q), 1.0), q, (H, W))
    fib_sigma = (0.4, 5.0) if rng.random() < 0.5 else (5.0, 0.4)
    fib_angle = 0.0 if fib_sigma[0] < fib_sigma[1] else np.pi / 2
    fib = _upsample(_smooth_noise(rng, (H // 2, W // 2), fib_sigma), 2, (H, W))
    eos = _EOSIN[T] * (1.0 + 0.22 * tex)
    eos += np.where(T == STROMA, 0.20 * fib, 0.0).astype(np.float32)
    eos *= np.where(T == NECROSIS, 0.75 + 0.25 * tex, 1.0).astype(np.float32)
    np.clip(eos, 0.0, None, out=eos)

    ink = np.zeros((H, W), dtype=np.float32)
    rand = lambda lo, hi: (lambda n: rng.uniform(lo, hi, n).astype(np.float32))
    ang = lambda n: rng.uniform(0, np.pi, n).astype(np.float32)

    # Fat: white adipocytes with thin eosinophilic membranes (Voronoi edges at half resolution).
    if (type_map == FAT).any():
        Th = T[::2, ::2]
        fy, fx = np.nonzero(Th == FAT)
        sy, sx = _jittered_grid(rng, Th.shape, s(70.0) / 2, jitter=0.4)
        from scipy.spatial import cKDTree

        d, _ = cKDTree(np.c_[sy, sx]).query(np.c_[fy, fx].astype(np.float32), k=2)
        mem = np.zeros(Th.shape, dtype=bool)
        mem[fy, fx] = (d[:, 1] - d[:, 0]) < 1.2
        mem = np.repeat(np.repeat(mem, 2, axis=0), 2, axis=1)[:H, :W]
        eos[mem] = 0.55
        ink[mem] += 0.04

    lumen = None
    if SUBTYPES[subtype] == "glandular":
        # Gland lumens inside the tumour, lined by a ring of tangential nuclei.
        gy, gx = _jittered_grid(rng, (H, W), s(48.0), jitter=0.25)
        sel = T[gy.astype(int), gx.astype(int)] == TUMOUR
        gy, gx = gy[sel], gx[sel]
        rad = rng.uniform(s(7.0), s(12.0), len(gy)).astype(np.float32)
        lum = np.zeros((H, W), dtype=np.float32)
        _stamp(lum, gy, gx, rad, rad, np.zeros_like(rad), np.ones_like(rad))
        lumen = lum > 0.5
        eos[lumen] = 0.03
        k = 10
        phi = (np.arange(k, dtype=np.float32)[None, :] / k * 2 * np.pi + rng.uniform(0, 2 * np.pi, (len(gy), 1))).ravel()
        rr = np.repeat(rad + s(3.2), k)
        ny, nx = np.repeat(gy, k) + rr * np.sin(phi), np.repeat(gx, k) + rr * np.cos(phi)
        n = len(ny)
        a = rng.uniform(s(3.6), s(4.4), n).astype(np.float32)
        _stamp(ink, ny, nx, a, a * 0.6, (phi + np.pi / 2).astype(np.float32), rng.uniform(0.8, 1.0, n).astype(np.float32), rim=0.3)
        _nuclei(rng, T, TUMOUR, s(16.0), 0.6, rand(s(3.5), s(4.5)), lambda a: a * 0.8, ang, rand(0.8, 1.0),
                rim=0.35, ink=ink, exclude=lumen)
    elif SUBTYPES[subtype] == "solid":
        _nuclei(rng, T, TUMOUR, s(11.0), 0.95, rand(s(4.0), s(5.0)), lambda a: a * rng.uniform(0.75, 0.95, len(a)).astype(np.float32),
                ang, rand(0.75, 0.95), rim=0.45, ink=ink)
    else:  # pleomorphic: large, irregular, hyperchromatic
        _nuclei(rng, T, TUMOUR, s(13.0), 0.9, rand(s(3.5), s(7.0)), lambda a: a * rng.uniform(0.45, 0.9, len(a)).astype(np.float32),
                ang, rand(1.1, 1.5), rim=0.15, ink=ink)
    _nuclei(rng, T, STROMA, s(22.0), 0.5, rand(s(4.5), s(6.0)), lambda a: a * 0.28,
            lambda n: (fib_angle + rng.normal(0, 0.25, n)).astype(np.float32), rand(0.8, 1.0), ink=ink)
    _nuclei(rng, T, LYMPH, s(7.5), 0.95, rand(s(2.6), s(3.2)), lambda a: a * 0.95, ang, rand(1.5, 1.8), ink=ink)
    _nuclei(rng, T, NECROSIS, s(6.0), 0.55, rand(s(0.7), s(1.6)), lambda a: a * 0.8, ang, rand(0.6, 1.0), ink=ink)

    np.minimum(ink, 2.2, out=ink)
    if cfg.modality == "fluorescence":
        return _fluorescence(rng, ink, T, tex)
    ink += np.where(T == BACKGROUND, 0.0, 0.035).astype(np.float32)
    # Beer-Lambert: I = I0 * exp(-(c_H * OD_H + c_E * OD_E)), per channel.
    i0 = 243.0
    rgb = np.empty((H, W, 3), dtype=np.uint8)
    for ch in range(3):
        od = 1.45 * _H_OD[ch] * ink + _E_OD[ch] * eos
        rgb[..., ch] = np.clip(i0 * np.exp(-od) + 0.5, 0, 255).astype(np.uint8)
    return rgb


def _fluorescence(rng: np.random.Generator, ink: np.ndarray, T: np.ndarray, tex: np.ndarray) -> np.ndarray:
    """DAPI-like RGB: nuclear stain ``ink`` bright in blue over black glass; R = G = 0.

    Blue = camera offset (about 2 counts, noisy) + faint non-specific signal over cellular tissue
    (about 14 counts, textured; none over glass or fat) + 120 counts per unit of nuclear stain.
    """
    cellular = ((T != BACKGROUND) & (T != FAT)).astype(np.float32)
    blue = 2.0 + rng.normal(0.0, 0.7, T.shape).astype(np.float32) + 14.0 * cellular * (1.0 + 0.3 * tex) + 120.0 * ink
    rgb = np.zeros(T.shape + (3,), dtype=np.uint8)
    rgb[..., 2] = np.clip(blue + 0.5, 0, 255).astype(np.uint8)
    return rgb


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------

def _halve(img: np.ndarray) -> np.ndarray:
    h, w = img.shape[0] // 2 * 2, img.shape[1] // 2 * 2
    x = img[:h, :w].astype(np.uint16)
    return ((x[0::2, 0::2] + x[1::2, 0::2] + x[0::2, 1::2] + x[1::2, 1::2] + 2) // 4).astype(np.uint8)


def write_pyramid_tiff(path: str | os.PathLike, rgb: np.ndarray, *, mpp: float | None, objective_power: int | None,
                       tile: int = 256, quality: int = 90, min_level_size: int = 512, name: str = "") -> int:
    """Write ``rgb`` as a tiled pyramidal TIFF with JPEG tiles and an Aperio-style description.

    Level 0 is page 0 (``subfiletype=0``); every lower level (each half the size of the previous
    one, until the smaller side is at most ``min_level_size``) is its own tiled page with
    ``subfiletype=1``. Resolution tags are in pixels per centimetre. Written atomically.

    ``mpp=None`` writes neither ``MPP`` nor resolution tags, ``objective_power=None`` no ``AppMag``:
    the slides without a physical scale that real scanners sometimes produce.

    Returns
    -------
    int
        The number of pyramid levels.
    """
    import tifffile

    h, w = rgb.shape[:2]
    levels = [rgb]
    while min(levels[-1].shape[:2]) > min_level_size:
        levels.append(_halve(levels[-1]))
    with atomic_path(path) as tmp, tifffile.TiffWriter(tmp, bigtiff=False) as tif:
        for k, img in enumerate(levels):
            lh, lw = img.shape[:2]
            ds = w / lw
            if k == 0:
                fields = ([f"AppMag = {objective_power}"] if objective_power else []) + \
                    ([f"MPP = {mpp:.4f}"] if mpp else []) + [f"Filename = {name}"]
                desc = (f"Aperio Image Library v12.0.0 (repro.wsi.synth)\n{w}x{h} [0,0 {w}x{h}] ({tile}x{tile}) "
                        f"JPEG/RGB Q={quality}|" + "|".join(fields))
            else:
                desc = f"Aperio Image Library v12.0.0 (repro.wsi.synth)\n{w}x{h} -> {lw}x{lh} JPEG/RGB Q={quality}"
            scale = {}
            if mpp:
                res = 1e4 / (mpp * ds)  # pixels per centimetre
                scale = {"resolution": (res, res), "resolutionunit": "CENTIMETER"}
            tif.write(img, tile=(tile, tile), compression="jpeg", compressionargs={"level": quality},
                      photometric="rgb", description=desc, metadata=None, subfiletype=0 if k == 0 else 1,
                      software=False, **scale)
    return len(levels)


# --------------------------------------------------------------------------------------------------
# Labels and the cohort
# --------------------------------------------------------------------------------------------------

def _z(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    sd = x.std()
    return (x - x.mean()) / (sd if sd > 0 else 1.0)


def plant_labels(summaries: list[dict[str, Any]], cfg: SynthConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Survival (time, event), gene expression from the planted interaction summaries.

    Survival: ``T_i ~ Exp(lambda0 * exp(eta_i))`` with ``eta_i = -b_int z(log(1 + interface_um))
    - b_inf z(infiltration)`` and ``lambda0 = ln 2 / median``; censoring ``C_i ~ Exp(c)`` with ``c``
    solved so that ``mean_i c / (c + lambda_i) = censor_rate`` (the expected censored fraction).
    """
    z_int = _z(np.log1p([s["interface_um"] for s in summaries]))
    z_inf = _z([s["infiltration"] for s in summaries])
    eta = -cfg.hazard_interface * z_int - cfg.hazard_infiltration * z_inf
    lam = np.log(2.0) / cfg.median_survival_months * np.exp(eta)
    lo, hi = 1e-9, 1e3  # bisection on c: the expected censored fraction is increasing in c
    for _ in range(100):
        c = np.sqrt(lo * hi)
        if np.mean(c / (c + lam)) < cfg.censor_rate:
            lo = c
        else:
            hi = c
    n = len(summaries)
    t_event = rng.exponential(1.0 / lam, n)
    t_cens = rng.exponential(1.0 / c, n) if cfg.censor_rate > 0 else np.full(n, np.inf)
    time = np.maximum(np.minimum(t_event, t_cens), 0.05)
    event = (t_event <= t_cens).astype(int)
    gene = 6.0 + cfg.gene_effect * z_inf + rng.normal(0.0, cfg.gene_noise, n)
    return {"survival_months": time, "event": event, "gene_expr": gene, "log_hazard": eta}


def generate_slide(slide_id: str, index: int, seed: int, cfg: SynthConfig, slide_path: str | os.PathLike,
                   truth_path: str | os.PathLike) -> dict[str, Any]:
    """Draw, render and write one slide (TIFF + ground-truth npz); return its layout summary."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, int(index)]))
    m = cfg.size // cfg.map_downsample
    lay = plant_layout(rng, m)
    rgb = render_slide(rng, lay["type_map"], lay["subtype"], cfg)
    n_levels = write_pyramid_tiff(slide_path, rgb, mpp=cfg.mpp, objective_power=cfg.objective_power, tile=cfg.tile,
                                  quality=cfg.jpeg_quality, min_level_size=cfg.min_level_size, name=slide_id)
    with atomic_path(truth_path) as tmp:
        np.savez_compressed(tmp, type_map=lay["type_map"], downsample=np.int64(cfg.map_downsample),
                            tissue_types=np.array(TISSUE_TYPES), tumour_region=lay["tumour_region"],
                            subtype=np.int64(lay["subtype"]))
    out = {"slide_id": slide_id, "subtype": lay["subtype"], "subtype_name": SUBTYPES[lay["subtype"]],
           "width": rgb.shape[1], "height": rgb.shape[0], "mpp": cfg.mpp, "levels": n_levels,
           "lymph_fraction_drawn": lay["lymph_frac_drawn"]}
    out.update(layout_summary(lay["type_map"], lay["tumour_region"], cfg.map_downsample * cfg.mpp))
    return out


def _generate_one(args: tuple) -> dict[str, Any]:
    return generate_slide(*args)


def generate_cohort(cfg: SynthConfig | dict[str, Any], *, seed: int, slides_dir: str | os.PathLike,
                    truth_dir: str | os.PathLike, manifest_path: str | os.PathLike, workers: int = 1):
    """Generate a whole synthetic cohort: slides, ground-truth maps and the manifest CSV.

    Parameters
    ----------
    cfg : SynthConfig or dict
        Cohort size and label model.
    seed : int
        Slide ``i`` is drawn from ``SeedSequence([seed, i])``; labels from ``SeedSequence([seed, -1])``.
    slides_dir, truth_dir, manifest_path
        ``{slides_dir}/{slide_id}.tiff``, ``{truth_dir}/{slide_id}.npz`` and the manifest CSV.
    workers : int
        Processes drawing slides in parallel.

    Returns
    -------
    pandas.DataFrame
        The manifest (one row per slide).
    """
    import pandas as pd

    from repro.logs import progress

    if isinstance(cfg, dict):
        cfg = from_dict(SynthConfig, cfg, "wsi.<scale>.synthetic")
    ids = slide_ids(cfg.n_slides)
    jobs = [(sid, i, seed, cfg, Path(slides_dir) / f"{sid}.tiff", Path(truth_dir) / f"{sid}.npz") for i, sid in enumerate(ids)]
    log.info("drawing %d synthetic slides of %d px (%s) with %d worker(s)", len(ids), cfg.size, asdict(cfg), workers)
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            rows = list(progress(pool.map(_generate_one, jobs), desc="slides", total=len(jobs)))
    else:
        rows = [_generate_one(j) for j in progress(jobs, desc="slides", total=len(jobs))]
    labels = plant_labels(rows, cfg, np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, 2**32])))
    df = pd.DataFrame(rows)
    for k, v in labels.items():
        df[k] = v
    first = ["slide_id", "survival_months", "event", "subtype", "subtype_name", "gene_expr"]
    df = df[first + [c for c in df.columns if c not in first]]
    with atomic_path(manifest_path) as tmp:
        df.to_csv(tmp, index=False, float_format="%.6g")
    log.info("cohort: %d slides, censored %.0f %%, subtypes %s", len(df), 100 * (1 - df.event.mean()),
             df.subtype_name.value_counts().to_dict())
    return df
