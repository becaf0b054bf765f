"""TMEvolve's planted MIL bags on a patch grid: tissue regions and interaction-driven labels, no images.

A fast stand-in for the WSI stage (whose own generator, :mod:`repro.wsi.synth`, draws slides):
each slide is a grid of patches whose tissue type comes from a planted map (tumour blobs, stroma,
lymphocyte clusters at the tumour margin or inside it, necrosis in the tumour core, fat), and whose
features are a type prototype plus noise. Slide labels depend on the *interaction* of the regions,
not only on their composition:

- hazard: higher with a short tumour-lymphocyte interface and little infiltration
  (``log h = -beta_int * z(interface) - beta_inf * z(infiltration) + beta_nec * z(necrosis)``);
- subtype: shifts the tumour patches' features along a subtype direction (tumour morphology);
- gene expression (a CD8A stand-in): lymphocyte density inside the tumour boundary, plus noise.

Used by the unit tests (small, fast bags with known region truth) and by
:func:`write_contract_files`, which writes the files the WSI stage produces
(``manifest.csv``, ``bags/{encoder}.h5``; see WSI_CONTRACT.md) so the TMEvolve rules can be run
without images.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import ndimage

__all__ = ["TISSUE_TYPES", "SyntheticBag", "make_type_map", "generate_bags", "write_contract_files"]

TISSUE_TYPES = ("tumour", "stroma", "lymphocytes", "necrosis", "fat")
TUMOUR, STROMA, LYMPH, NECROSIS, FAT = range(5)


@dataclass
class SyntheticBag:
    features: np.ndarray     # (N, D) float32
    coords: np.ndarray       # (N, 2) int64, level-0 top-left corners
    patch_types: np.ndarray  # (N,) int16
    type_map: np.ndarray     # (H, W) int16 full grid, -1 = background


def _blob(shape, centre, radius, rng, roughness=0.35):
    """Boolean blob: a disc with a smoothly perturbed radius."""
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    noise = ndimage.gaussian_filter(rng.normal(size=shape), 2.0)
    noise /= noise.std() + 1e-9
    r = np.hypot(yy - centre[0], xx - centre[1])
    return r < radius * (1 + roughness * noise)


def make_type_map(side: int, rng: np.random.Generator, immune: str) -> np.ndarray:
    """A (side, side) tissue-type map; ``immune`` in {"inflamed", "excluded", "desert"}."""
    shape = (side, side)
    tmap = np.full(shape, STROMA, np.int16)
    centre = rng.uniform(0.35, 0.65, 2) * side
    tumour = _blob(shape, centre, rng.uniform(0.18, 0.3) * side, rng)
    tmap[tumour] = TUMOUR
    core = ndimage.binary_erosion(tumour, iterations=3) & (rng.random() < 0.6)
    if core.any():
        tmap[_blob(shape, centre, rng.uniform(0.05, 0.1) * side, rng) & core] = NECROSIS
    fat_centre = rng.choice([0.1, 0.9], 2) * side
    tmap[_blob(shape, fat_centre, rng.uniform(0.08, 0.16) * side, rng) & ~tumour] = FAT
    margin = ndimage.binary_dilation(tumour, iterations=2) & ~tumour
    inner = tumour & ~ndimage.binary_erosion(tumour, iterations=2)
    if immune == "inflamed":      # lymphocytes along the margin and infiltrating the tumour
        lymph = (margin & (rng.random(shape) < 0.7)) | (inner & (rng.random(shape) < 0.45))
    elif immune == "excluded":    # lymphocytes at the margin only
        lymph = margin & (rng.random(shape) < rng.uniform(0.3, 0.8))
    else:                         # desert: a few clusters far from the tumour
        far = ~ndimage.binary_dilation(tumour, iterations=4)
        lymph = _blob(shape, rng.uniform(0.1, 0.9, 2) * side, rng.uniform(0.04, 0.1) * side, rng) & far
    tmap[lymph & (tmap != NECROSIS)] = LYMPH
    bg = ~_blob(shape, (side / 2, side / 2), side * 0.62, rng, roughness=0.15)   # glass at the corners
    tmap[bg & (tmap != TUMOUR)] = -1
    return tmap


def _summaries(tmap: np.ndarray) -> dict:
    tumour, lymph = tmap == TUMOUR, tmap == LYMPH
    n_tumour = max(int(tumour.sum()), 1)
    touch = ndimage.binary_dilation(lymph, structure=np.ones((3, 3), bool))
    interface = float((tumour & touch).sum()) / np.sqrt(n_tumour)              # tumour patches touching lymphocytes
    hull = ndimage.binary_fill_holes(ndimage.binary_closing(tumour | (lymph & ndimage.binary_dilation(tumour)),
                                                            iterations=1))
    infiltration = float((lymph & ndimage.binary_erosion(hull | tumour)).sum()) / n_tumour
    necrosis = float((tmap == NECROSIS).sum()) / n_tumour
    return {"interface_length": interface, "infiltration": infiltration, "necrosis_fraction": necrosis}


def generate_bags(n_slides: int, *, side: tuple[int, int] = (12, 18), feat_dim: int = 32, n_subtypes: int = 3,
                  noise: float = 1.0, separation: float = 1.5, subtype_shift: float = 0.8,
                  censoring: float = 0.3, patch_size: int = 224, seed: int = 0):
    """Generate ``n_slides`` synthetic bags and their manifest.

    Returns
    -------
    bags : dict[str, SyntheticBag]
    manifest : pandas.DataFrame with the WSI-contract columns (``slide_id, survival_months, event,
        subtype, subtype_name, gene_expr``) plus the planted summaries.
    """
    if n_slides < 2:
        raise ValueError(f"generate_bags: need at least 2 slides, got {n_slides}")
    rng = np.random.default_rng(seed)
    protos = rng.normal(size=(len(TISSUE_TYPES), feat_dim)) * separation / np.sqrt(feat_dim) * 3
    sub_dirs = rng.normal(size=(n_subtypes, feat_dim))
    sub_dirs *= subtype_shift * 3 / np.linalg.norm(sub_dirs, axis=1, keepdims=True)
    bags, rows = {}, []
    for s in range(n_slides):
        sid = f"syn{s:04d}"
        n_side = int(rng.integers(side[0], side[1] + 1))
        immune = rng.choice(["inflamed", "excluded", "desert"])
        tmap = make_type_map(n_side, rng, immune)
        subtype = int(rng.integers(n_subtypes))
        ys, xs = np.nonzero(tmap >= 0)
        types = tmap[ys, xs].astype(np.int16)
        feats = protos[types] + rng.normal(size=(len(types), feat_dim)) * noise / np.sqrt(feat_dim) * 3
        feats[types == TUMOUR] += sub_dirs[subtype]
        feats += rng.normal(size=feat_dim) * 0.2                               # slide-level stain shift
        coords = np.stack([xs, ys], 1).astype(np.int64) * patch_size
        bags[sid] = SyntheticBag(feats.astype(np.float32), coords, types, tmap)
        rows.append({"slide_id": sid, "subtype": subtype, "subtype_name": f"subtype_{subtype}",
                     "immune_phenotype": str(immune), **_summaries(tmap)})
    man = pd.DataFrame(rows)
    z = lambda v: (v - v.mean()) / (v.std() + 1e-9)  # noqa: E731
    log_h = -0.8 * z(man.interface_length) - 0.6 * z(man.infiltration) + 0.4 * z(man.necrosis_fraction)
    t_event = rng.exponential(24.0 * np.exp(-log_h))
    # exponential censoring times, their scale set (bisection) so that a fraction `censoring` is censored
    e = rng.exponential(1.0, n_slides)
    lo, hi = 1e-3, 1e6
    for _ in range(60):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if np.mean(e * mid < t_event) > censoring else (lo, mid)
    t_cens = e * hi
    man["survival_months"] = np.maximum(np.minimum(t_event, t_cens), 0.1).round(3)
    man["event"] = (t_event <= t_cens).astype(int)
    man["gene_expr"] = (z(man.infiltration) + 0.3 * rng.normal(size=n_slides)).round(4)
    return bags, man


def write_contract_files(bags: dict, manifest: pd.DataFrame, manifest_path: str | os.PathLike,
                         bags_path: str | os.PathLike, *, encoder: str = "synthetic_bags",
                         patch_size: int = 224, cohort: str = "synthetic") -> None:
    """Write ``manifest.csv`` and ``bags/{encoder}.h5`` in the WSI-contract layout (atomically)."""
    import h5py

    from repro.io import atomic_open, atomic_path

    with atomic_open(manifest_path, "w", newline="") as fh:
        manifest.to_csv(fh, index=False)
    with atomic_path(bags_path) as tmp, h5py.File(tmp, "w") as f:
        dim = next(iter(bags.values())).features.shape[1]
        f.attrs.update({"encoder": encoder, "dim": dim, "patch_size_level0": patch_size,
                        "tissue_types": json.dumps(list(TISSUE_TYPES)), "cohort": cohort})
        for sid, bag in bags.items():
            g = f.create_group(f"slides/{sid}")
            g["features"] = bag.features
            g["coords"] = bag.coords
            g["patch_types"] = bag.patch_types
