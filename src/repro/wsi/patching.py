"""Patch grids on tissue, stored in the CLAM / TRIDENT HDF5 layout.

A slide is tiled by a regular grid anchored at level-0 (0, 0) with step = the patch side in level-0
pixels (no overlap), so the 8-neighbourhood of a patch is the patches at +-step (the contract with
TMEvolve's patch graph). A grid cell is kept when its tissue fraction reaches
``min_tissue_fraction``. Patches are read at the coarsest level at least as fine as the target mpp
and resized (area averaging) to ``patch_size`` pixels.

HDF5 layout (readable by CLAM's and TRIDENT's feature extractors): dataset ``coords`` int64 (N, 2),
level-0 (x, y) of each patch's top-left corner, with attributes ``patch_size`` (pixels at
``patch_level``, CLAM), ``patch_level``, ``downsample`` (of that level, (x, y)),
``downsampled_level_dim``, ``level_dim`` (level-0 (width, height)), ``mpp`` (level 0; -1 when
unknown), ``patch_size_level0`` and ``level0_width``/``level0_height`` (TRIDENT), ``target_mpp``,
``target_patch_size`` (pixels fed to the encoder) and ``name``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import h5py
import numpy as np

from repro.io import atomic_path, open_h5
from repro.config import from_dict
from repro.wsi.reader import Slide
from repro.wsi.tissue import TissueMask

__all__ = ["PatchConfig", "PatchGrid", "make_grid", "write_coords", "read_coords", "read_patches", "save_preview"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PatchConfig:
    """Patching settings (config.yaml ``wsi.<scale>.patch``)."""

    #: micrometres per pixel of the patches fed to the encoder (1.0 = 10x)
    target_mpp: float = 1.0
    #: patch side in pixels at target_mpp
    patch_size: int = 112
    #: keep a grid cell when at least this fraction of it is tissue
    min_tissue_fraction: float = 0.5
    #: keep at most this many patches (evenly spaced in grid order, deterministic); 0 = all
    max_patches: int = 0


@dataclass
class PatchGrid:
    """Kept patches of one slide and how to read them."""

    coords: np.ndarray  # (N, 2) int64, level-0 (x, y) top-left
    patch_size_level0: int
    patch_level: int
    read_size: int  # pixels read at patch_level (then resized to target_patch_size)
    level_downsample: float
    target_patch_size: int
    target_mpp: float
    level_dim: tuple[int, int]
    downsampled_level_dim: tuple[int, int]
    mpp: float | None
    tissue_fraction: np.ndarray  # (N,)
    name: str = ""

    def attrs(self) -> dict[str, Any]:
        return {"patch_size": int(self.read_size), "patch_level": int(self.patch_level),
                "downsample": np.array([self.level_downsample, self.level_downsample], dtype=np.float64),
                "downsampled_level_dim": np.array(self.downsampled_level_dim, dtype=np.int64),
                "level_dim": np.array(self.level_dim, dtype=np.int64), "mpp": float(self.mpp or -1.0),
                "patch_size_level0": int(self.patch_size_level0), "level0_width": int(self.level_dim[0]),
                "level0_height": int(self.level_dim[1]), "target_mpp": float(self.target_mpp),
                "target_patch_size": int(self.target_patch_size), "name": self.name}


def make_grid(slide: Slide, tissue: TissueMask, cfg: PatchConfig | dict | None = None) -> PatchGrid:
    """The grid of patches of ``slide`` whose tissue fraction passes ``cfg.min_tissue_fraction``.

    Raises
    ------
    ValueError
        The slide has no mpp and no fallback (a patch size in micrometres needs one).
    """
    cfg = cfg if isinstance(cfg, PatchConfig) else from_dict(PatchConfig, cfg, "wsi.<scale>.patch")
    mpp = slide.require_mpp()
    size0 = int(round(cfg.patch_size * cfg.target_mpp / mpp))
    if size0 < 1:
        raise ValueError(f"slide {slide.path}: patch of {cfg.patch_size} px at {cfg.target_mpp} um/px is below one pixel")
    level = slide.level_for_mpp(cfg.target_mpp)
    ds = float(slide.level_downsamples[level])
    read_size = max(1, int(round(size0 / ds)))
    W, H = slide.dimensions
    gx, gy = np.meshgrid(np.arange(0, W - size0 + 1, size0), np.arange(0, H - size0 + 1, size0))
    xy = np.c_[gx.ravel(), gy.ravel()].astype(np.int64)  # row-major: y, then x
    frac = tissue.fraction_in_boxes(xy, size0)
    keep = frac >= cfg.min_tissue_fraction
    xy, frac = xy[keep], frac[keep]
    if cfg.max_patches and len(xy) > cfg.max_patches:
        pick = np.unique(np.linspace(0, len(xy) - 1, cfg.max_patches).round().astype(int))
        xy, frac = xy[pick], frac[pick]
    log.info("%s: %d patches of %d px at %.3g um/px (%d level-0 px, read %d px at level %d)", slide.path.name,
             len(xy), cfg.patch_size, cfg.target_mpp, size0, read_size, level)
    return PatchGrid(coords=xy, patch_size_level0=size0, patch_level=level, read_size=read_size, level_downsample=ds,
                     target_patch_size=cfg.patch_size, target_mpp=cfg.target_mpp, level_dim=(W, H),
                     downsampled_level_dim=tuple(slide.level_dimensions[level]), mpp=slide.mpp,
                     tissue_fraction=frac, name=slide.path.stem)


def write_coords(path: str | os.PathLike, grid: PatchGrid) -> None:
    """Write ``coords`` (and ``tissue_fraction``) with the CLAM/TRIDENT attributes, atomically."""
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        d = f.create_dataset("coords", data=grid.coords.astype(np.int64).reshape(-1, 2))
        for k, v in grid.attrs().items():
            d.attrs[k] = v
        f.create_dataset("tissue_fraction", data=grid.tissue_fraction.astype(np.float32))


def read_coords(path: str | os.PathLike) -> tuple[np.ndarray, dict[str, Any]]:
    """``coords`` (N, 2) int64 and its attributes from a patch (or features) HDF5 file."""
    with open_h5(path) as f:
        if "coords" not in f:
            raise ValueError(f"{path}: no 'coords' dataset (not a patch file)")
        d = f["coords"]
        return d[()].astype(np.int64).reshape(-1, 2), {k: _plain(v) for k, v in d.attrs.items()}


def _plain(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def read_patches(slide: Slide, coords: np.ndarray, attrs: dict[str, Any]):
    """Yield each patch (target_patch_size x target_patch_size x 3 uint8) at ``coords``, in order."""
    level, read_size, out = int(attrs["patch_level"]), int(attrs["patch_size"]), int(attrs["target_patch_size"])
    for x, y in coords:
        yield slide.read_region((int(x), int(y)), level, (read_size, read_size), out_size=out)


def save_preview(path: str | os.PathLike, slide: Slide, tissue: TissueMask, grid: PatchGrid, max_size: int = 1024) -> None:
    """A PNG: the thumbnail with the tissue mask tinted green and the kept patches outlined."""
    from PIL import Image, ImageDraw

    thumb = slide.thumbnail(max_size)
    th, tw = thumb.shape[:2]
    scale = tw / slide.dimensions[0]
    mask = np.asarray(Image.fromarray(tissue.mask.astype(np.uint8) * 255).resize((tw, th), Image.Resampling.NEAREST)) > 0
    img = thumb.astype(np.float32)
    img[mask] = 0.75 * img[mask] + 0.25 * np.array([0, 200, 0], dtype=np.float32)
    pil = Image.fromarray(img.round().astype(np.uint8))
    draw = ImageDraw.Draw(pil)
    s = grid.patch_size_level0 * scale
    for x, y in grid.coords:
        draw.rectangle([x * scale, y * scale, x * scale + s, y * scale + s], outline=(20, 20, 220))
    with atomic_path(path) as tmp:
        pil.save(tmp, format="PNG")
