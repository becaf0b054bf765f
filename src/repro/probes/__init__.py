"""Linear probes on hidden states: many logistic probes trained at once, their directions and cosines.

A probe is one linear layer with a logistic loss, read at a *site* (a layer, or a layer x token
position). :func:`train_probes` fits one probe per site in a single batched optimisation (the sites
are independent; batching only saves time), the way the Tool-Cognition-Action reference trains its
probes: Adam, learning rate 0.01, weight decay 0.01, 100 full passes over the training split.

    X = lm.hidden_states(prompts, layers=range(L + 1), positions=list(range(-20, 0)))  # (n, L+1, 20, d)
    fit = train_probes(X.reshape(n, -1, d), y, split=train_test_split(n, 0.3, seed=0), seed=0)
    fit.test_accuracy            # (sites,)
    cosine(fit_a.weight, fit_b.weight)   # (sites,): angle between two probes' directions

Choices
-------
- Features are standardised per dimension with the training split's mean and standard deviation
  (the residual stream of a pretrained model has a few dimensions hundreds of times larger than the
  rest, which 100 Adam epochs at lr 0.01 do not absorb). Directions are the weight vectors in that
  standardised space; two probes at the same site share the standardisation, so their cosine
  compares like with like.
- Full-batch Adam (the reference's data sets are a few thousand items; ours smaller).
- :func:`cross_fit` gives every item an out-of-fold prediction (K folds), for analyses that need a
  probe's judgement on every item rather than on the 30% test split only.
- :func:`random_abs_cosine` is what |cosine| two directions drawn at random in ``d`` dimensions have
  on average, the level two probes that read nothing reach by chance (about sqrt(2 / (pi d))).
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np

__all__ = ["ProbeConfig", "ProbeFit", "train_probes", "train_test_split", "cross_fit", "cosine", "random_abs_cosine"]


@dataclass(frozen=True)
class ProbeConfig:
    """How probes are trained (the reference's settings by default)."""

    lr: float = 0.01
    """Adam learning rate"""
    weight_decay: float = 0.01
    """Adam weight decay (L2 added to the gradient, torch's Adam)"""
    epochs: int = 100
    """full-batch passes over the training split"""
    test_fraction: float = 0.3
    """share of items held out to measure accuracy (reference: 70/30)"""


@dataclass
class ProbeFit:
    """Fitted probes, one per site.

    Attributes
    ----------
    weight : (sites, d) directions in the standardised feature space.
    bias : (sites,).
    mean, scale : (sites, d) the training split's standardisation.
    train_accuracy, test_accuracy : (sites,).
    test_index : indices of the held-out items; ``test_pred`` (sites, n_test) their 0/1 predictions.
    """

    weight: np.ndarray
    bias: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    train_accuracy: np.ndarray
    test_accuracy: np.ndarray
    test_index: np.ndarray
    test_pred: np.ndarray

    def predict(self, X: np.ndarray) -> np.ndarray:
        """0/1 predictions (sites, n) for features ``X`` (n, sites, d)."""
        Z = (np.asarray(X, dtype=np.float64) - self.mean[None]) / self.scale[None]  # (n, sites, d)
        logits = np.einsum("nsd,sd->sn", Z, self.weight) + self.bias[:, None]
        return (logits > 0).astype(np.int64)


def train_test_split(n: int, test_fraction: float, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random split of ``range(n)`` into (train, test) index arrays; both non-empty."""
    if n < 2:
        raise ValueError(f"a probe needs at least 2 items to split; got {n}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}")
    order = np.random.default_rng(seed).permutation(n)
    n_test = min(n - 1, max(1, int(round(test_fraction * n))))
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def _check(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 3:
        raise ValueError(f"probe features must be (items, sites, dim); got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"probe labels must be one per item ({X.shape[0]}); got shape {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("probe labels must be 0 or 1")
    if not np.isfinite(X).all():
        raise ValueError("probe features hold NaN or infinite values")
    return X, y.astype(np.float64)


def _fit(X: np.ndarray, y: np.ndarray, cfg: ProbeConfig, seed: int):
    """Adam on the mean logistic loss of every site at once; returns (weight, bias, mean, scale)."""
    import torch

    mean = X.mean(axis=0)  # (sites, d)
    scale = X.std(axis=0)
    scale = np.where(scale > 1e-8, scale, 1.0)
    Z = torch.as_tensor((X - mean[None]) / scale[None], dtype=torch.float32).transpose(0, 1)  # (sites, n, d)
    t = torch.as_tensor(y, dtype=torch.float32).expand(Z.shape[0], -1)  # (sites, n)
    gen = torch.Generator().manual_seed(int(seed) % (2 ** 63))
    bound = 1.0 / np.sqrt(Z.shape[2])  # nn.Linear's default initialisation
    w = ((torch.rand(Z.shape[0], Z.shape[2], generator=gen) * 2 - 1) * bound).requires_grad_()
    b = ((torch.rand(Z.shape[0], generator=gen) * 2 - 1) * bound).requires_grad_()
    opt = torch.optim.Adam([w, b], lr=cfg.lr, weight_decay=cfg.weight_decay)
    for _ in range(cfg.epochs):
        logits = torch.einsum("snd,sd->sn", Z, w) + b[:, None]
        # the mean over items of each site, summed over sites: each site's gradient is its own loss's
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, t, reduction="none").mean(1).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach().double().numpy(), b.detach().double().numpy(), mean, scale


def train_probes(X: np.ndarray, y: np.ndarray, *, split: tuple[np.ndarray, np.ndarray],
                 cfg: ProbeConfig = ProbeConfig(), seed: int = 0) -> ProbeFit:
    """One logistic probe per site of ``X`` (items, sites, d) for labels ``y`` (items,), trained on
    ``split[0]`` and scored on ``split[1]``."""
    X, y = _check(X, y)
    train, test = (np.asarray(s, dtype=np.int64) for s in split)
    w, b, mean, scale = _fit(X[train], y[train], cfg, seed)
    fit = ProbeFit(w, b, mean, scale, np.zeros(0), np.zeros(0), test, np.zeros(0))
    pred_train, pred_test = fit.predict(X[train]), fit.predict(X[test])
    fit.train_accuracy = (pred_train == y[train][None]).mean(axis=1)
    fit.test_accuracy = (pred_test == y[test][None]).mean(axis=1) if len(test) else np.full(len(w), np.nan)
    fit.test_pred = pred_test
    return fit


def cross_fit(X: np.ndarray, y: np.ndarray, *, folds: int, cfg: ProbeConfig = ProbeConfig(), seed: int = 0) -> np.ndarray:
    """Out-of-fold 0/1 predictions (sites, items): each item judged by probes that never saw it."""
    X, y = _check(X, y)
    if not 2 <= folds <= len(y):
        raise ValueError(f"cross_fit needs 2 <= folds <= items ({len(y)}); got {folds}")
    fold_of = np.random.default_rng(seed).permutation(len(y)) % folds
    out = np.zeros((X.shape[1], len(y)), dtype=np.int64)
    for k in range(folds):
        train, test = np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)
        fit = train_probes(X, y, split=(train, test), cfg=cfg, seed=seed + k)
        out[:, test] = fit.test_pred
    return out


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of matching rows of ``a`` and ``b`` (sites, d); 0 where a row is zero."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.where(norms > 0, (a * b).sum(-1) / np.where(norms > 0, norms, 1.0), 0.0)


def random_abs_cosine(d: int) -> float:
    """E|cos| between two independent directions uniform on the sphere in ``d`` dimensions.

    One coordinate u of a uniform unit vector has density proportional to (1 - u^2)^((d - 3) / 2), so
    E|u| = Gamma(d / 2) / (sqrt(pi) Gamma((d + 1) / 2)), about sqrt(2 / (pi d)) for large d (0.16 at
    d = 24, 0.033 at d = 576); d = 1 gives 1.
    """
    if int(d) != d or d < 1:
        raise ValueError(f"random_abs_cosine: the dimension must be a positive integer; got {d}")
    return math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)
