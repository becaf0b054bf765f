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

The spatial cohort (version 2, below) is the workflow's main cohort. :func:`generate_spatial_cohort`
draws it as bags of prototype features (the features-without-encoder track of the tests);
:func:`write_spatial_slides` draws the same layouts and labels as whole-slide images, which the WSI
stage reads like any scanned cohort.

Choices and deviations of the slides
------------------------------------
- Each planted patch is a square of the WSI stage's patch side (``patch_size x target_mpp``, 112 um
  at every preset) at ``slide_mpp`` (1.0 um/px, a 10x scan), so the stage's grid, anchored at the
  origin, falls on the planted patches; one patch of glass (``margin``) surrounds the tissue so
  that tissue detection sees glass, as on a real slide.
- The rendering map has ``map_px_per_patch`` (8) pixels per patch: the renderer warps boundaries
  by about one map pixel (14 um), so boundaries look organic and a patch's majority type stays the
  planted one (tested).
- The tumour morphology that :func:`repro.wsi.synth.render_slide` needs is drawn from the slide's
  rendering stream, independent of every label (the phenotype label is the arrangement).
- Fat renders white with thin membranes; the tissue detector drops most fat patches, as it does on
  real slides. The labels do not read fat.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import ndimage

from repro.papers.tmevolve.grid import spatial_slide_ids

__all__ = ["TISSUE_TYPES", "SyntheticBag", "make_type_map", "generate_bags", "write_contract_files",
           "SPATIAL_PHENOTYPES", "SpatialConfig", "spatial_layout", "spatial_summary", "generate_spatial_cohort",
           "spatial_slide_map", "write_spatial_slides"]

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
    z = lambda v: (v - v.mean()) / (v.std() + 1e-9)
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


# ----------------------------------------------------------------------------------------------
# Version 2: the spatial cohort (composition drawn first, arrangement second)

#: Immune phenotypes of the spatial cohort: where the lymphocyte aggregates sit, not how many there are.
SPATIAL_PHENOTYPES = ("inflamed", "excluded", "mixed")


@dataclass(frozen=True)
class SpatialConfig:
    """Size, features and label model of the spatial cohort (presets: config.yaml ``tmevolve.<scale>.spatial``)."""

    n_slides: int = 300
    blocks: int = 6             # slide side in compartment blocks
    block: int = 2              # compartment width in patches (spec: at least two patches wide)
    feat_dim: int = 32          # patch features: type prototype + noise (the feature-oracle track)
    separation: float = 0.6     # per-dimension sd of the type prototypes
    noise: float = 1.0          # per-dimension sd of the patch noise
    stain_shift: float = 0.2    # per-dimension sd of a slide-level shift
    hazard_effect: float = 1.2  # log-hazard change per sd of the lymphocyte contact fraction (protective)
    gene_effect: float = 1.0
    gene_noise: float = 0.5
    censor_rate: float = 0.3
    median_survival_months: float = 30.0
    patch_size: int = 224       # level-0 pixels per patch in the written coordinates (bags without slides)
    slide_mpp: float = 1.0      # micrometres per level-0 pixel of the rendered slides
    margin: int = 1             # patches of glass around the tissue on a rendered slide
    map_px_per_patch: int = 8   # rendering-map pixels per patch (the renderer warps boundaries by ~1 map pixel)

    def __post_init__(self) -> None:
        if self.block < 2:
            raise ValueError(f"tmevolve spatial cohort: block must be >= 2 patches (compartments at least two "
                             f"patches wide), got {self.block}")
        if self.blocks < 4:
            raise ValueError(f"tmevolve spatial cohort: blocks must be >= 4, got {self.blocks}")


def _block_neighbours(mask: np.ndarray) -> np.ndarray:
    """Blocks 8-adjacent to ``mask`` and not in it."""
    return ndimage.binary_dilation(mask, structure=np.ones((3, 3), bool)) & ~mask


def spatial_layout(rng: np.random.Generator, cfg: SpatialConfig) -> dict:
    """One slide of the spatial cohort: composition drawn first, arrangement second.

    1. Composition: the number of blocks of each tissue type (tumour 20-35 %, lymphocytes 10-22 %,
       necrosis and fat 0-8 % each, stroma the rest), drawn without looking at the phenotype.
    2. Arrangement: the tumour grows as one compact connected blob from a random block; necrosis
       borders it; the phenotype (uniform over :data:`SPATIAL_PHENOTYPES`) decides where the same
       lymphocyte blocks go: ``inflamed`` all touch the tumour, ``excluded`` none (held in stroma at
       least one block away), ``mixed`` a uniform 25-75 % share; fat fills free blocks away from the
       tumour. Each block is ``block x block`` patches of one type.

    Returns ``type_map`` (P, P) int16 patch types (:data:`TISSUE_TYPES` ids), ``phenotype`` and
    ``counts`` (the composition drawn).
    """
    B = cfg.blocks
    nb = B * B
    fr = {"tumour": rng.uniform(0.20, 0.35), "lymphocytes": rng.uniform(0.10, 0.22),
          "necrosis": rng.uniform(0.0, 0.08), "fat": rng.uniform(0.0, 0.08)}
    counts = {k: max(int(round(v * nb)), 1 if k in ("tumour", "lymphocytes") else 0) for k, v in fr.items()}
    phenotype = int(rng.integers(len(SPATIAL_PHENOTYPES)))
    bmap = np.full((B, B), STROMA, np.int16)
    free = np.ones((B, B), bool)

    tumour = np.zeros((B, B), bool)
    tumour[tuple(rng.integers(1, B - 1, 2))] = True
    while tumour.sum() < counts["tumour"]:
        front = np.argwhere(_block_neighbours(tumour))
        # compact growth: frontier blocks weighted by their number of tumour neighbours (8-neighbourhood)
        nn_count = ndimage.convolve(tumour.astype(int), np.ones((3, 3), int), mode="constant")[tuple(front.T)]
        pick = front[rng.choice(len(front), p=nn_count**2 / (nn_count**2).sum())]
        tumour[tuple(pick)] = True
    bmap[tumour] = TUMOUR
    free &= ~tumour

    def place(n: int, allowed: np.ndarray) -> np.ndarray:
        idx = np.argwhere(allowed & free)
        take = idx[rng.permutation(len(idx))[: max(min(n, len(idx)), 0)]]
        out = np.zeros((B, B), bool)
        if len(take):
            out[tuple(take.T)] = True
        return out

    touching = _block_neighbours(tumour)
    nec = place(counts["necrosis"], touching)
    bmap[nec] = NECROSIS
    free &= ~nec
    touching &= free
    far = ~ndimage.binary_dilation(tumour, structure=np.ones((3, 3), bool), iterations=2)  # >= 1 block of stroma between

    share = {"inflamed": 1.0, "excluded": 0.0, "mixed": rng.uniform(0.25, 0.75)}[SPATIAL_PHENOTYPES[phenotype]]
    n_touch = int(round(share * counts["lymphocytes"]))
    lymph = place(n_touch, touching)
    free &= ~lymph
    rest = counts["lymphocytes"] - int(lymph.sum())
    away = place(rest, far)                           # the rest of the aggregates away from the tumour
    free &= ~away
    lymph |= away
    rest -= int(away.sum())
    if rest > 0:                                      # a small slide ran out of far blocks: anywhere not touching
        extra = place(rest, ~touching if n_touch < counts["lymphocytes"] else np.ones_like(free))
        free &= ~extra
        lymph |= extra
    bmap[lymph] = LYMPH
    fat = place(counts["fat"], ~_block_neighbours(tumour))
    bmap[fat] = FAT
    type_map = np.kron(bmap, np.ones((cfg.block, cfg.block), np.int16)).astype(np.int16)
    return {"type_map": type_map, "phenotype": phenotype, "counts": counts}


def spatial_summary(type_map: np.ndarray) -> dict:
    """The planted quantities (patch level) and the composition of one layout.

    ``contact``: fraction of lymphocyte patches with a tumour patch among their 8 neighbours (the
    arrangement the labels are made from); ``tl_edges``: tumour-lymphocyte 8-neighbour patch pairs;
    ``frac_<type>``: the patch-type histogram (the composition).
    """
    t, ly = type_map == TUMOUR, type_map == LYMPH
    near_t = ndimage.binary_dilation(t, structure=np.ones((3, 3), bool))
    k = np.ones((3, 3), int)
    k[1, 1] = 0
    tl_edges = int((ndimage.convolve(t.astype(int), k, mode="constant") * ly).sum())
    out = {"contact": float((near_t & ly).sum() / max(int(ly.sum()), 1)), "tl_edges": tl_edges}
    tissue = type_map >= 0
    for i, name in enumerate(TISSUE_TYPES):
        out[f"frac_{name}"] = float((type_map[tissue] == i).mean())
    return out


def _censored_exponential(rng, lam: np.ndarray, censor_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Exponential event times with rates ``lam``; exponential censoring whose rate ``c`` solves
    ``mean_i c / (c + lam_i) = censor_rate`` (the expected censored fraction)."""
    lo, hi = 1e-9, 1e3
    for _ in range(100):
        c = np.sqrt(lo * hi)
        lo, hi = (c, hi) if np.mean(c / (c + lam)) < censor_rate else (lo, c)
    n = len(lam)
    t_event = rng.exponential(1.0 / lam, n)
    t_cens = rng.exponential(1.0 / c, n) if censor_rate > 0 else np.full(n, np.inf)
    return np.maximum(np.minimum(t_event, t_cens), 0.05), (t_event <= t_cens).astype(int)


def _spatial_rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, 7, *stream]))


def _spatial_config(cfg: SpatialConfig | dict) -> SpatialConfig:
    from repro.config import from_dict

    if isinstance(cfg, dict):
        cfg = from_dict(SpatialConfig, cfg, "tmevolve.<scale>.spatial")
    if cfg.n_slides < 2:
        raise ValueError(f"tmevolve spatial cohort: need at least 2 slides, got {cfg.n_slides}")
    return cfg


def _spatial_labels(rows: list[dict], cfg: SpatialConfig, seed: int) -> pd.DataFrame:
    """The manifest of the spatial cohort: ``rows`` (one per slide) plus the planted labels."""
    man = pd.DataFrame(rows)
    rng = _spatial_rng(seed, 2**32)
    zc = (man.contact - man.contact.mean()) / (man.contact.std(ddof=0) + 1e-12)
    eta = -cfg.hazard_effect * zc
    lam = np.log(2.0) / cfg.median_survival_months * np.exp(eta)
    man["survival_months"], man["event"] = _censored_exponential(rng, lam.to_numpy(), cfg.censor_rate)
    man["gene_expr"] = 6.0 + cfg.gene_effect * zc + rng.normal(0.0, cfg.gene_noise, len(man))
    man["log_hazard"] = eta
    first = ["slide_id", "survival_months", "event", "subtype", "subtype_name", "gene_expr"]
    return man[first + [c for c in man.columns if c not in first]]


def _layout_row(sid: str, lay: dict) -> dict:
    return {"slide_id": sid, "subtype": lay["phenotype"], "subtype_name": SPATIAL_PHENOTYPES[lay["phenotype"]],
            **spatial_summary(lay["type_map"])}


def generate_spatial_cohort(cfg: SpatialConfig | dict, *, seed: int):
    """The spatial cohort: bags whose labels depend on the arrangement of the patches, not their histogram.

    Labels (``z`` = standardised over the cohort):

    - survival: ``log h = -hazard_effect * z(contact)``; exponential times, censoring about
      ``censor_rate``;
    - subtype: the immune phenotype (inflamed / excluded / mixed), set by the arrangement;
    - gene expression (a CD8A stand-in): ``6 + gene_effect * z(contact) + N(0, gene_noise)``.

    Features (the feature-oracle track, no encoder): each patch is its type's prototype plus
    Gaussian noise plus a slide-level shift, so the aggregator is tested apart from any encoder.
    Slide ``i`` depends only on ``seed`` and ``i``; prototypes and labels on ``seed``. The same
    ``seed`` gives the same layouts and labels as :func:`write_spatial_slides` (the cohort as slides).

    Returns
    -------
    bags : dict[str, SyntheticBag]
    manifest : pandas.DataFrame (contract columns + ``log_hazard``, ``contact``, ``phenotype``, fractions)
    """
    cfg = _spatial_config(cfg)
    root = np.random.SeedSequence([int(seed) % 2**63, 7])
    protos = np.random.default_rng(root.spawn(1)[0]).normal(0.0, cfg.separation, (len(TISSUE_TYPES), cfg.feat_dim))
    bags, rows = {}, []
    for i, sid in enumerate(spatial_slide_ids(cfg.n_slides)):
        rng = _spatial_rng(seed, i)
        lay = spatial_layout(rng, cfg)
        tmap = lay["type_map"]
        ys, xs = np.nonzero(tmap >= 0)
        types = tmap[ys, xs].astype(np.int16)
        feats = (protos[types] + rng.normal(0.0, cfg.noise, (len(types), cfg.feat_dim))
                 + rng.normal(0.0, cfg.stain_shift, cfg.feat_dim))
        bags[sid] = SyntheticBag(feats.astype(np.float32), np.stack([xs, ys], 1).astype(np.int64) * cfg.patch_size,
                                 types, tmap)
        rows.append(_layout_row(sid, lay))
    return bags, _spatial_labels(rows, cfg, seed)


# ----------------------------------------------------------------------------------------------
# The spatial cohort as whole-slide images (read by the WSI stage like any scanned cohort)


def spatial_slide_map(type_map: np.ndarray, cfg: SpatialConfig) -> np.ndarray:
    """The rendering map of a layout: :mod:`repro.wsi.synth` tissue ids (0 = glass), ``cfg.margin``
    patches of glass around the tissue, each patch ``cfg.map_px_per_patch`` map pixels wide."""
    padded = np.pad(type_map.astype(np.int16) + 1, cfg.margin, constant_values=0)  # our ids + 1 = the WSI synth's
    return np.kron(padded, np.ones((cfg.map_px_per_patch,) * 2, np.int16)).astype(np.int16)


def _slide_synth_config(cfg: SpatialConfig, patch_um: float):
    from repro.wsi.synth import SynthConfig

    patch_px = patch_um / cfg.slide_mpp
    if abs(patch_px - round(patch_px)) > 1e-6 or round(patch_px) % cfg.map_px_per_patch:
        raise ValueError(f"tmevolve spatial slides: a patch of {patch_um} um at {cfg.slide_mpp} um/px is {patch_px} px, "
                         f"not a whole multiple of map_px_per_patch {cfg.map_px_per_patch}")
    side = cfg.blocks * cfg.block + 2 * cfg.margin
    ds = int(round(patch_px)) // cfg.map_px_per_patch
    return SynthConfig(n_slides=cfg.n_slides, size=side * cfg.map_px_per_patch * ds, mpp=cfg.slide_mpp,
                       objective_power=int(round(10.0 / cfg.slide_mpp)), map_downsample=ds)


def _write_spatial_slide(args: tuple) -> dict:
    from repro.io import atomic_path
    from repro.wsi.synth import SUBTYPES, render_slide, write_pyramid_tiff
    from repro.wsi.synth import TISSUE_TYPES as WSI_TYPES

    sid, i, seed, cfg, scfg, slide_path, truth_path = args
    lay = spatial_layout(_spatial_rng(seed, i), cfg)          # the layout of generate_spatial_cohort's slide i
    rng = _spatial_rng(seed, i, 1)                            # rendering: its own stream
    morphology = int(rng.integers(len(SUBTYPES)))             # tumour morphology: drawn apart from every label
    fine = spatial_slide_map(lay["type_map"], cfg)
    rgb = render_slide(rng, fine, morphology, scfg)
    levels = write_pyramid_tiff(slide_path, rgb, mpp=scfg.mpp, objective_power=scfg.objective_power, tile=scfg.tile,
                                quality=scfg.jpeg_quality, min_level_size=scfg.min_level_size, name=sid)
    with atomic_path(truth_path) as tmp:
        np.savez_compressed(tmp, type_map=fine, downsample=np.int64(scfg.map_downsample), tissue_types=np.array(WSI_TYPES),
                            patch_type_map=lay["type_map"], margin=np.int64(cfg.margin),
                            patch_size_level0=np.int64(scfg.map_downsample * cfg.map_px_per_patch))
    return {**_layout_row(sid, lay), "morphology": SUBTYPES[morphology], "width": rgb.shape[1], "height": rgb.shape[0],
            "mpp": scfg.mpp, "levels": levels}


def write_spatial_slides(cfg: SpatialConfig | dict, *, seed: int, patch_um: float, slides_dir: str | os.PathLike,
                         truth_dir: str | os.PathLike, manifest_path: str | os.PathLike, workers: int = 1) -> pd.DataFrame:
    """The spatial cohort as pyramidal TIFF slides, ground truth beside them, and the manifest.

    Slide ``i`` has the layout of :func:`generate_spatial_cohort`'s slide ``i`` (same ``seed``), and
    the manifest the same labels. Each patch of the layout is drawn by :func:`repro.wsi.synth.render_slide`
    as a square of ``patch_um`` micrometres (the WSI stage's patch, so its grid, anchored at the
    origin, falls on the planted patches), textured as its tissue type, with ``cfg.margin`` patches
    of glass around the tissue; the tumour morphology is drawn from the slide's rendering stream and
    carries no label. Truth (``{truth_dir}/{slide}.npz``): the rendering map (``type_map``, glass 0,
    ``tissue_types``, ``downsample``) that :func:`repro.wsi.bags.build_bags` reads, and the planted
    ``patch_type_map``.
    """
    from concurrent.futures import ProcessPoolExecutor
    from pathlib import Path

    from repro.io import atomic_path

    cfg = _spatial_config(cfg)
    scfg = _slide_synth_config(cfg, patch_um)
    jobs = [(sid, i, seed, cfg, scfg, Path(slides_dir) / f"{sid}.tiff", Path(truth_dir) / f"{sid}.npz")
            for i, sid in enumerate(spatial_slide_ids(cfg.n_slides))]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            rows = list(pool.map(_write_spatial_slide, jobs))
    else:
        rows = [_write_spatial_slide(j) for j in jobs]
    man = _spatial_labels(rows, cfg, seed)
    with atomic_path(manifest_path) as tmp:
        man.to_csv(tmp, index=False)
    return man
