"""The per-slide steps of the WSI stage, one function per workflow rule (scripts stay thin).

``cfg`` is the ``wsi`` preset of config.yaml (keys ``reader``, ``tissue``, ``patch``, ``features``,
``encoders``). Each step reads its inputs, computes, and writes its outputs atomically: a slide that
fails (missing, truncated, unsupported, no mpp where one is needed) raises an error naming the
file and leaves nothing behind.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import numpy as np

from repro.io import atomic_path, load_npz
from repro.wsi.reader import open_slide
from repro.wsi.tissue import TissueMask, detect_tissue

__all__ = ["tissue_step", "load_tissue", "patch_step", "features_step"]

log = logging.getLogger(__name__)


def _default_mpp(cfg: dict[str, Any]) -> float | None:
    return (cfg.get("reader") or {}).get("default_mpp")


def tissue_step(slide_path: str | os.PathLike, out_npz: str | os.PathLike, cfg: dict[str, Any]) -> TissueMask:
    """Detect tissue; write ``mask``, ``downsample``, ``threshold``, ``seg_mpp``, ``modality`` to ``out_npz``."""
    with open_slide(slide_path, default_mpp=_default_mpp(cfg)) as slide:
        tm = detect_tissue(slide, cfg.get("tissue"))
    with atomic_path(out_npz) as tmp:
        np.savez_compressed(tmp, mask=tm.mask, downsample=np.float64(tm.downsample), threshold=np.float64(tm.threshold),
                            seg_mpp=np.float64(tm.seg_mpp), modality=np.str_(tm.modality))
    return tm


def load_tissue(path: str | os.PathLike) -> TissueMask:
    z = load_npz(path)
    return TissueMask(mask=z["mask"].astype(bool), downsample=float(z["downsample"]),
                      threshold=float(z["threshold"]), seg_mpp=float(z["seg_mpp"]),
                      modality=str(z["modality"]) if "modality" in z else "brightfield")


def patch_step(slide_path: str | os.PathLike, tissue_npz: str | os.PathLike, out_h5: str | os.PathLike,
               preview_png: str | os.PathLike | None, cfg: dict[str, Any]) -> dict[str, Any]:
    """Grid the tissue into patches; write the coords HDF5 (CLAM/TRIDENT layout) and a preview PNG."""
    from repro.wsi.patching import make_grid, save_preview, write_coords

    with open_slide(slide_path, default_mpp=_default_mpp(cfg)) as slide:
        tissue = load_tissue(tissue_npz)
        grid = make_grid(slide, tissue, cfg.get("patch"))
        if len(grid.coords) == 0:
            log.warning("%s: no patch passes the tissue filter", slide_path)
        if preview_png:
            save_preview(preview_png, slide, tissue, grid)
        write_coords(out_h5, grid)
    return {"n_patches": int(len(grid.coords)), "patch_size_level0": grid.patch_size_level0, "patch_level": grid.patch_level}


def features_step(slide_path: str | os.PathLike, patches_h5: str | os.PathLike, out_h5: str | os.PathLike,
                  encoder_name: str, cfg: dict[str, Any], *, device: str = "cpu", seed: int = 0,
                  threads: int | None = None) -> dict[str, Any]:
    """Encode every patch of ``patches_h5``; write ``features`` + ``coords`` to ``out_h5``.

    ``threads``: torch threads of the forward pass (the job's Snakemake ``threads``)."""
    from repro.wsi.features import create_encoder, extract_features, write_features
    from repro.wsi.patching import read_coords

    encoders = cfg.get("encoders") or {}
    if encoder_name not in encoders:
        raise ValueError(f"config: wsi encoder {encoder_name!r} is not configured; known: {sorted(encoders)}")
    fcfg = cfg.get("features") or {}
    coords, attrs = read_coords(patches_h5)
    encoder = create_encoder(encoder_name, encoders[encoder_name], device=device, seed=seed)
    t0 = time.perf_counter()
    with open_slide(slide_path, default_mpp=_default_mpp(cfg)) as slide:
        feats = extract_features(slide, coords, attrs, encoder, batch_size=int(fcfg.get("batch_size", 16)),
                                 prefetch=bool(fcfg.get("prefetch", True)), threads=threads)
    dt = time.perf_counter() - t0
    write_features(out_h5, feats, coords, attrs, encoder)
    log.info("%s: %d patches -> %d-d features in %.1f s (%.1f patches/s, %s torch thread(s))", slide_path,
             len(coords), encoder.dim, dt, len(coords) / max(dt, 1e-9), threads or "default")
    return {"n_patches": int(len(coords)), "dim": encoder.dim, "seconds": dt}
