"""The per-slide steps of the WSI stage, one function per workflow rule (scripts stay thin).

:func:`extract_cohort` runs the same three steps over every slide of a cohort in one job and writes
the cohort's bags file directly (no per-slide files): for a cohort of many small slides, where a
job per slide and step would spend more on starting processes and loading the encoder than on
the slides themselves.

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

__all__ = ["tissue_step", "load_tissue", "patch_step", "features_step", "extract_cohort"]

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


def _extract_slides(args: tuple) -> list[tuple[str, Any, dict[str, Any]]]:
    """Tissue, grid and features of some slides with one encoder (one worker of :func:`extract_cohort`)."""
    from repro.wsi.bags import Bag, patch_types_from_truth
    from repro.wsi.features import create_encoder, extract_features
    from repro.wsi.patching import make_grid

    slides, truth, cfg, encoder_name, device, seed, threads = args
    encoders = cfg.get("encoders") or {}
    if encoder_name not in encoders:
        raise ValueError(f"config: wsi encoder {encoder_name!r} is not configured; known: {sorted(encoders)}")
    encoder = create_encoder(encoder_name, encoders[encoder_name], device=device, seed=seed)
    fcfg = cfg.get("features") or {}
    out = []
    for sid, path in slides:
        with open_slide(path, default_mpp=_default_mpp(cfg)) as slide:
            tissue = detect_tissue(slide, cfg.get("tissue"))
            grid = make_grid(slide, tissue, cfg.get("patch"))
            if len(grid.coords) == 0:
                log.warning("%s: no patch passes the tissue filter", path)
            feats = extract_features(slide, grid.coords, grid.attrs(), encoder, batch_size=int(fcfg.get("batch_size", 16)),
                                     prefetch=bool(fcfg.get("prefetch", True)), threads=threads)
        types = np.full(len(grid.coords), -1, dtype=np.int16)
        tissue_types = None
        if truth and sid in truth:
            t = load_npz(truth[sid], ["tissue_types", "type_map", "downsample"])
            tissue_types = [str(x) for x in t["tissue_types"]]
            types = patch_types_from_truth(grid.coords, grid.patch_size_level0, t["type_map"], float(t["downsample"]),
                                           len(tissue_types))
        out.append((sid, Bag(features=feats, coords=grid.coords, patch_types=types),
                    {"size0": grid.patch_size_level0, "tissue_types": tissue_types, "encoder": encoder.name}))
    return out


def extract_cohort(slides: dict[str, str | os.PathLike], out_bags: str | os.PathLike, cfg: dict[str, Any],
                   encoder_name: str, *, cohort: str, truth: dict[str, str | os.PathLike] | None = None,
                   device: str = "cpu", seed: int = 0, workers: int = 1) -> dict[str, Any]:
    """Tissue, patches and features of every slide of ``slides`` (``{slide_id: path}``), and the bags file.

    The steps of :func:`tissue_step`, :func:`patch_step` and :func:`features_step` (same functions,
    same settings) without their per-slide files, then the bags file of
    :func:`repro.wsi.bags.build_bags` (with ground-truth patch types from ``truth``,
    ``{slide_id: npz}``). ``workers`` processes share the slides in contiguous chunks, each loading
    the encoder once and running it on one torch thread; the features do not depend on ``workers``.

    Returns a summary (slides, patches per slide, dim).
    """
    from concurrent.futures import ProcessPoolExecutor

    from repro.wsi.bags import write_bags
    from repro.wsi.synth import TISSUE_TYPES

    ids = sorted(slides)
    if not ids:
        raise ValueError(f"wsi extract {out_bags}: no slides")
    workers = max(1, min(int(workers), len(ids)))
    chunks = [[(sid, slides[sid]) for sid in part] for part in np.array_split(np.array(ids, dtype=object), workers)]
    args = [(chunk, truth, cfg, encoder_name, device, seed, 1) for chunk in chunks]
    t0 = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_extract_slides, args))
    else:
        parts = [_extract_slides(a) for a in args]
    results = [r for part in parts for r in part]
    sizes = {info["size0"] for _, _, info in results}
    if len(sizes) > 1:
        raise ValueError(f"wsi extract {out_bags}: slides of different patch sizes (level-0 px) {sorted(sizes)}")
    types = next((info["tissue_types"] for _, _, info in results if info["tissue_types"]), list(TISSUE_TYPES))
    bags = {sid: bag for sid, bag, _ in results}
    write_bags(out_bags, bags, encoder=results[0][2]["encoder"], patch_size_level0=sizes.pop(), tissue_types=types,
               cohort=cohort)
    counts = [len(b) for b in bags.values()]
    log.info("extract %s: %d slides, %d patches in %.1f s with %d worker(s)", out_bags, len(bags), sum(counts),
             time.perf_counter() - t0, workers)
    return {"n_slides": len(bags), "n_patches": int(sum(counts)), "patches_per_slide": counts,
            "dim": int(results[0][1].features.shape[1])}
