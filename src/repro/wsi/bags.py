"""Cohort bags: every slide's patch features in one HDF5 file (the WSI stage's output to MIL models).

Layout (WSI_CONTRACT): group ``/slides/{slide_id}`` with ``features`` float32 (N, D), ``coords``
int64 (N, 2) level-0 (x, y) top-left corners on a regular grid of step ``patch_size_level0``, and
``patch_types`` int16 (N,) the majority ground-truth tissue type of each patch (-1 when unknown);
file attributes ``encoder``, ``dim``, ``patch_size_level0``, ``tissue_types`` (JSON list), ``cohort``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import h5py
import numpy as np

from repro.io import atomic_path, load_npz, open_h5

__all__ = ["Bag", "load_bags", "read_bag_attrs", "write_bags", "patch_types_from_truth", "build_bags"]

log = logging.getLogger(__name__)


@dataclass
class Bag:
    """One slide's patches."""

    features: np.ndarray  # (N, D) float32
    coords: np.ndarray  # (N, 2) int64, level-0 (x, y)
    patch_types: np.ndarray  # (N,) int16, -1 = unknown

    def __len__(self) -> int:
        return len(self.features)


def patch_types_from_truth(coords: np.ndarray, size0: int, type_map: np.ndarray, downsample: float,
                           n_types: int) -> np.ndarray:
    """The majority type of ``type_map`` (one pixel = ``downsample`` level-0 px) under each patch box."""
    out = np.full(len(coords), -1, dtype=np.int16)
    h, w = type_map.shape
    for i, (x, y) in enumerate(coords):
        x0, y0 = int(x // downsample), int(y // downsample)
        x1, y1 = int(np.ceil((x + size0) / downsample)), int(np.ceil((y + size0) / downsample))
        block = type_map[max(y0, 0) : min(y1, h), max(x0, 0) : min(x1, w)]
        if block.size:
            out[i] = int(np.argmax(np.bincount(block.ravel(), minlength=n_types)))
    return out


def write_bags(path: str | os.PathLike, bags: Mapping[str, Bag], *, encoder: str, patch_size_level0: int,
               tissue_types: list[str], cohort: str, extra_attrs: dict[str, Any] | None = None) -> None:
    """Write the cohort file atomically."""
    dims = {b.features.shape[1] for b in bags.values() if b.features.ndim == 2}
    if len(dims) > 1:
        raise ValueError(f"{path}: bags of different feature dimensions {sorted(dims)}")
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        grp = f.create_group("slides")
        for sid in sorted(bags):
            b = bags[sid]
            if not (len(b.features) == len(b.coords) == len(b.patch_types)):
                raise ValueError(f"{path}: slide {sid} has {len(b.features)} features, {len(b.coords)} coords, "
                                 f"{len(b.patch_types)} patch types")
            g = grp.create_group(sid)
            g.create_dataset("features", data=b.features.astype(np.float32))
            g.create_dataset("coords", data=b.coords.astype(np.int64).reshape(-1, 2))
            g.create_dataset("patch_types", data=b.patch_types.astype(np.int16))
        f.attrs.update({"encoder": encoder, "dim": int(dims.pop()) if dims else 0,
                        "patch_size_level0": int(patch_size_level0), "tissue_types": json.dumps(list(tissue_types)),
                        "cohort": cohort, "n_slides": len(bags)})
        for k, v in (extra_attrs or {}).items():
            f.attrs[k] = v


def read_bag_attrs(path: str | os.PathLike) -> dict[str, Any]:
    """File attributes of a bags file (``tissue_types`` decoded from JSON)."""
    with open_h5(path) as f:
        attrs = {k: (v.decode() if isinstance(v, bytes) else v.item() if isinstance(v, np.generic) else v)
                 for k, v in f.attrs.items()}
    if "tissue_types" in attrs:
        attrs["tissue_types"] = json.loads(attrs["tissue_types"])
    return attrs


def load_bags(path: str | os.PathLike) -> dict[str, Bag]:
    """All slides of a bags file, ``{slide_id: Bag}`` in sorted slide order."""
    out: dict[str, Bag] = {}
    with open_h5(path) as f:
        if "slides" not in f:
            raise ValueError(f"{path}: no /slides group (not a bags file)")
        for sid in sorted(f["slides"]):
            g = f["slides"][sid]
            out[sid] = Bag(features=g["features"][()].astype(np.float32, copy=False),
                           coords=g["coords"][()].astype(np.int64, copy=False),
                           patch_types=g["patch_types"][()].astype(np.int16, copy=False))
    return out


def build_bags(feature_files: Mapping[str, str | os.PathLike], out_path: str | os.PathLike, *, cohort: str,
               truth_files: Mapping[str, str | os.PathLike] | None = None) -> dict[str, Any]:
    """Gather per-slide feature files (and ground-truth maps, synthetic cohorts) into one bags file.

    Returns a summary (slides, patches per slide, dim).
    """
    from repro.wsi.synth import TISSUE_TYPES
    from repro.wsi.features import read_features

    bags: dict[str, Bag] = {}
    encoder, size0, tissue_types = None, None, list(TISSUE_TYPES)
    for sid, fpath in sorted(feature_files.items()):
        feats, coords, attrs = read_features(fpath)
        if encoder is None:
            encoder, size0 = attrs.get("encoder", "unknown"), int(attrs["patch_size_level0"])
        elif int(attrs["patch_size_level0"]) != size0:
            raise ValueError(f"{fpath}: patch_size_level0 {attrs['patch_size_level0']} differs from the cohort's {size0}")
        types = np.full(len(coords), -1, dtype=np.int16)
        if truth_files and sid in truth_files:
            t = load_npz(truth_files[sid], ["tissue_types", "type_map", "downsample"])
            tissue_types = [str(x) for x in t["tissue_types"]]
            types = patch_types_from_truth(coords, size0, t["type_map"], float(t["downsample"]), len(tissue_types))
        bags[sid] = Bag(features=feats, coords=coords, patch_types=types)
    write_bags(out_path, bags, encoder=encoder or "unknown", patch_size_level0=size0 or 0, tissue_types=tissue_types,
               cohort=cohort)
    counts = [len(b) for b in bags.values()]
    log.info("bags %s: %d slides, %d patches (min %d, median %d, max %d)", out_path, len(bags), sum(counts),
             min(counts, default=0), int(np.median(counts)) if counts else 0, max(counts, default=0))
    return {"n_slides": len(bags), "n_patches": int(sum(counts)), "patches_per_slide": counts,
            "dim": int(next(iter(bags.values())).features.shape[1]) if bags else 0}
