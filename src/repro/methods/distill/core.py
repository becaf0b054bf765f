"""Multimodal dataset distillation (MDD) in a frozen feature space: the pieces every method shares.

- :class:`DistilledSet`: ``n`` synthetic (or selected) pairs, image-feature and text-feature
  vectors in the standardised feature space of the frozen encoders, optionally with a learned
  ``n x n`` similarity target (LoRS) and the seeds of the initialisations the distillation saw.
- :class:`Standardizer` / :func:`standardised`: the feature space every method works in.
- :func:`sample_real_pairs`: random real (image, caption) pairs, the usual initialisation.
- ``DISTILLERS``: the registry of methods (``{method}`` wildcard). Each module that defines a
  method registers it: ``mdadd``, ``mdadd_noqueue`` (:mod:`repro.methods.distill.mdadd`),
  ``random``, ``herding``, ``covmatch``, ``lors``, ``full`` (:mod:`repro.methods.distill.baselines`);
  importing :mod:`repro.methods.distill` imports them all. Each is
  ``f(train: SplitFeatures, n_pairs, cfg, seed) -> DistilledSet``, where ``cfg`` holds the
  ``student`` block and the ``distill`` block of the methods it uses.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from repro.methods.distill.features import SplitFeatures
from repro.registry import Registry

__all__ = ["DistilledSet", "Standardizer", "standardised", "sample_real_pairs", "DISTILLERS", "distill"]

log = logging.getLogger(__name__)

DISTILLERS = Registry("distillation method")


@dataclass
class DistilledSet:
    """``n`` pairs in the standardised feature space; ``targets`` is an optional (n, n) similarity label."""

    image: np.ndarray  # (n, Dx) float32
    text: np.ndarray  # (n, Dt) float32
    targets: np.ndarray | None = None  # (n, n) float32 learned similarity (LoRS), else None = identity
    seen_seeds: list[int] = field(default_factory=list)  # student initialisations used while distilling
    trace: list[float] = field(default_factory=list)  # objective per iteration

    def __post_init__(self) -> None:
        if len(self.image) != len(self.text):
            raise ValueError(f"distilled set: {len(self.image)} images but {len(self.text)} texts")
        if self.targets is not None and self.targets.shape != (len(self.image),) * 2:
            raise ValueError(f"distilled set: targets {self.targets.shape} for {len(self.image)} pairs")

    def __len__(self) -> int:
        return len(self.image)

    def save(self, path) -> None:
        from repro.io import atomic_path

        extra = {} if self.targets is None else {"targets": self.targets}
        with atomic_path(path) as tmp:
            np.savez(tmp, image=self.image, text=self.text, seen_seeds=np.asarray(self.seen_seeds, np.int64),
                     trace=np.asarray(self.trace, np.float64), **extra)

    @classmethod
    def load(cls, path) -> "DistilledSet":
        from repro.io import load_npz

        z = load_npz(path)
        return cls(image=z["image"], text=z["text"], targets=z["targets"] if "targets" in z else None,
                   seen_seeds=[int(s) for s in z["seen_seeds"]], trace=[float(v) for v in z["trace"]])


class Standardizer:
    """Centre each modality on its train mean and divide by one scalar: the per-coordinate RMS.

    One scalar per modality (not a z-score per coordinate) keeps the encoder's geometry; after it
    the mean squared coordinate is 1, so one learning rate suits both modalities' synthetic vectors.
    """

    def fit(self, image: np.ndarray, text: np.ndarray) -> "Standardizer":
        self.mu_x_, self.mu_t_ = image.mean(0), text.mean(0)
        self.s_x_ = float(np.sqrt(((image - self.mu_x_) ** 2).mean()))
        self.s_t_ = float(np.sqrt(((text - self.mu_t_) ** 2).mean()))
        if self.s_x_ == 0 or self.s_t_ == 0:
            raise ValueError("Standardizer: a modality has constant features")
        return self

    def transform(self, image: np.ndarray, text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (((image - self.mu_x_) / self.s_x_).astype(np.float32),
                ((text - self.mu_t_) / self.s_t_).astype(np.float32))


def standardised(train: SplitFeatures, *others: SplitFeatures) -> list[SplitFeatures]:
    """``train`` and ``others`` standardised with the train statistics (images and captions)."""
    st = Standardizer().fit(train.image, train.text)
    out = []
    for s in (train, *others):
        x, t = st.transform(s.image, s.text)
        out.append(SplitFeatures(image=x, text=t, caption_image=s.caption_image))
    return out


def sample_real_pairs(train: SplitFeatures, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random real (image, caption) pairs, distinct images where possible; (n, Dx), (n, Dt)."""
    n_img = len(train.image)
    imgs = rng.choice(n_img, size=n, replace=n > n_img)
    caps = np.empty(n, np.int64)
    by_image = _captions_by_image(train.caption_image, n_img)
    for j, i in enumerate(imgs):
        caps[j] = rng.choice(by_image[i])
    return train.image[imgs].copy(), train.text[caps].copy()


def _captions_by_image(caption_image: np.ndarray, n_img: int) -> list[np.ndarray]:
    order = np.argsort(caption_image, kind="stable")
    return np.split(order, np.searchsorted(caption_image[order], np.arange(1, n_img)))


def distill(method: str, train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    """Run registered method ``method`` on the standardised train split; returns ``n_pairs`` pairs.

    The registry is complete once :mod:`repro.methods.distill` is imported (importing this module
    imports its package first).
    """
    if n_pairs < 1 and method != "full":
        raise ValueError(f"n_pairs must be >= 1, got {n_pairs}")
    return DISTILLERS.get(method)(train, n_pairs, cfg, seed)
