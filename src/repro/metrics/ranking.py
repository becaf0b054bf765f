"""Ranking metrics for recommenders that order candidates within a group: NDCG@K, Hit@K, weighted
Kendall tau (bottom-weighted as in ModelLens' evaluation, and top-weighted).

Conventions: ``truth`` and ``pred`` are scores where higher is better; ties in ``pred`` are broken
pessimistically (a candidate of lower truth placed first), so a constant predictor never scores
above chance by luck of the sort order.

- NDCG@K (Järvelin & Kekäläinen 2002) with linear gains ``rel`` (non-negative):
  ``DCG@K = sum_{i<K} rel[pi(i)] / log2(i + 2)``, divided by the DCG@K of the ideal order.
- Weighted tau (Vigna 2015, ``scipy.stats.weightedtau``, hyperbolic weigher ``1 / (r + 1)``):
  scipy weights an exchange by the *largest* values. ModelLens (luisrui/ModelLens, commit 009e4c1)
  passes ranks with 1 = best, so its weight falls on the worst-ranked candidates: swapping the top
  two of ten scores 0.98, the bottom two 0.89 (:func:`weighted_tau_bottom`). Passing the scores
  themselves puts the weight on the best candidates, which is what a recommender is used for
  (:func:`weighted_tau_top`: top swap 0.89, bottom swap 0.98).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata, weightedtau

__all__ = ["pessimistic_order", "ndcg_at_k", "hit_at_k", "weighted_tau_bottom", "weighted_tau_top"]


def _check(truth, pred) -> tuple[np.ndarray, np.ndarray]:
    truth, pred = np.asarray(truth, dtype=float), np.asarray(pred, dtype=float)
    if truth.shape != pred.shape or truth.ndim != 1:
        raise ValueError(f"truth and pred must be 1-d of one length; got shapes {truth.shape} and {pred.shape}")
    if not (np.isfinite(truth).all() and np.isfinite(pred).all()):
        raise ValueError("truth and pred must be finite")
    return truth, pred


def pessimistic_order(truth, pred) -> np.ndarray:
    """Indices by decreasing ``pred``; among equal predictions the lower truth comes first."""
    truth, pred = _check(truth, pred)
    return np.lexsort((truth, -pred))


def ndcg_at_k(truth, pred, k: int) -> float:
    """NDCG@K of the order of ``pred`` with gains ``truth`` (non-negative); 1.0 when all gains are 0."""
    truth, pred = _check(truth, pred)
    if (truth < 0).any():
        raise ValueError("NDCG gains must be non-negative")
    k = min(int(k), truth.size)
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = float(np.sort(truth)[::-1][:k] @ disc)
    if ideal == 0.0:
        return 1.0
    return float(truth[pessimistic_order(truth, pred)][:k] @ disc) / ideal


def hit_at_k(truth, pred, k: int) -> float:
    """1.0 when the truly best candidate is among the top ``k`` of ``pred`` (pessimistic ties)."""
    truth, pred = _check(truth, pred)
    top = pessimistic_order(truth, pred)[: int(k)]
    return float(truth[top].max() >= truth.max())


def weighted_tau_bottom(truth, pred) -> float:
    """ModelLens' weighted tau: scipy's weightedtau on ranks with 1 = best (weight on the worst)."""
    truth, pred = _check(truth, pred)
    return _finite(weightedtau(rankdata(-truth), rankdata(-pred)).statistic)


def weighted_tau_top(truth, pred) -> float:
    """Top-weighted tau: scipy's weightedtau on the scores (weight on the best candidates)."""
    truth, pred = _check(truth, pred)
    return _finite(weightedtau(truth, pred).statistic)


def _finite(tau: float) -> float:
    """A constant ranking (scipy's nan) carries no order: tau 0."""
    return 0.0 if not np.isfinite(tau) else float(tau)
