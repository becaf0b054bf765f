"""Data regimes of the munkey rebuild, with a planted instance-specific signal, and the forget sets.

Regime ``digits`` (the fine-grained stand-in): scikit-learn's 1,797 8x8 digits (offline), classes
differing in small strokes. Planted signal: a share ``canary_frac`` of *all* images (train and test
alike) get a label drawn uniformly among the wrong classes. A canary's label can only be predicted
by memorising that instance, so "a canary in the forget set is still predicted with its canary
label" measures the instance-specific signal that forgetting must remove; the retrain oracle, which
never saw it, predicts it at the rate of a test canary (near 0). Because test images carry canaries
at the same rate, a model that has truly forgotten sees forget and test losses from one
distribution (MIA AUC 0.5).

Keys and inputs are features from a frozen encoder: a fixed random conv layer (16 3x3 filters,
ReLU, 2x2 average pooling; 256-d), seeded per data seed, standardised on the training set. It is
the stand-in for the paper's frozen pretrained ViT-B/16 (no pretrained 8x8 encoder exists offline).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["Regime", "make_regime", "forget_indices", "REGIMES"]

REGIMES = ("digits",)


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


def _frozen_conv_features(images: np.ndarray, seed: int) -> np.ndarray:
    gen = torch.Generator().manual_seed(seed)
    weight = torch.randn(16, 1, 3, 3, generator=gen) / 3.0
    x = torch.as_tensor(images, dtype=torch.float32)[:, None] / 16.0              # (N, 1, 8, 8)
    h = F.avg_pool2d(F.relu(F.conv2d(x, weight, padding=1)), 2)                  # (N, 16, 4, 4)
    return h.flatten(1).numpy()


def make_regime(name: str, seed: int, *, canary_frac: float = 0.05, test_frac: float = 0.25) -> Regime:
    """Draw regime ``name`` with its canaries and train/test split from ``seed``."""
    if name not in REGIMES:
        raise ValueError(f"unknown munkey regime {name!r}; known: {', '.join(REGIMES)}")
    if not 0 <= canary_frac < 1 or not 0 < test_frac < 1:
        raise ValueError(f"canary_frac must lie in [0, 1) and test_frac in (0, 1); got {canary_frac}, {test_frac}")
    from sklearn.datasets import load_digits

    data = load_digits()
    images, labels, n_classes = data.images, data.target.astype(np.int64), 10
    rng = np.random.default_rng(seed)
    canary = rng.random(len(labels)) < canary_frac
    labels = labels.copy()
    labels[canary] = (labels[canary] + rng.integers(1, n_classes, canary.sum())) % n_classes  # a wrong label
    order = rng.permutation(len(labels))
    n_test = int(round(test_frac * len(labels)))
    test, train = order[:n_test], order[n_test:]
    feats = _frozen_conv_features(images, seed)
    mu, sd = feats[train].mean(0), feats[train].std(0) + 1e-6
    feats = (feats - mu) / sd
    t = lambda a, dt=torch.float32: torch.as_tensor(a, dtype=dt)  # noqa: E731
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
        return np.sort(rng.permutation(n)[: max(1, int(round(fraction * n)))])
    if kind == "class":
        c = int(rng.integers(int(y_train.max()) + 1)) if forget_class is None else forget_class
        return np.flatnonzero(y_train.numpy() == c)
    raise ValueError(f"unknown forget-set kind {kind!r}; known: random, class")
