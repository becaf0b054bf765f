"""Ranking metrics for recommenders that order candidates within a group: NDCG@K, Hit@K, Recall@K,
weighted Kendall tau (bottom-weighted as in ModelLens' evaluation, and top-weighted), and the
pair-weighted mean of taus over groups.

Conventions: ``truth`` and ``pred`` are scores where higher is better. For NDCG, Hit and Recall, ties
in ``pred`` are broken pessimistically (a candidate of lower truth placed first), so a constant
predictor never scores above chance by luck of the sort order; the weighted taus give tied
candidates their mean rank, so a tie carries no order (the reference's ``np.argsort`` leaves ties
to the sort in both; without ties the definitions agree).

ModelLens' definitions (luisrui/ModelLens, commit 009e4c1, ``module/utils/metric.py``,
``evaluate_ranking_mlp``):

- NDCG@K (Järvelin & Kekäläinen 2002): ``DCG@K = sum_{i<K} gain(rel[pi(i)]) / log2(i + 2)``,
  divided by the DCG@K of the ideal order. The reference's gain is ``2^rel - 1`` on the truth
  min-max scaled within the group (``gain="exponential"``, :func:`minmax`); ``gain="linear"`` takes
  ``rel`` itself. Up to the reference's 1e-9 guards, except that a group whose gains are all 0
  scores 1 here (every order is ideal) and 0 there.
- Hit@K: the truly best candidate is among the top K predicted. Recall@K: the share of the true
  top K among the predicted top K, ``|top_K(pred) & top_K(truth)| / min(K, n)``.
- The reference averages NDCG@K, Hit@K and Recall@K over the groups with at least K candidates
  (``num_models >= k``); the evaluation that calls these functions does the same.
- Weighted tau (Vigna 2015, ``scipy.stats.weightedtau``, hyperbolic weigher ``1 / (r + 1)``):
  the reference passes ranks with 0 = best (``_to_rank``) and ``rank=None``, one decreasing
  lexicographic order by the true rank, so the weight falls on the truly worst candidates: swapping
  the top two of ten scores 0.98, the bottom two 0.89 (:func:`weighted_tau_bottom`). It averages
  the groups' taus with weights ``n (n - 1) / 2``, the number of pairs (:func:`pair_weighted_mean`).
  Passing the scores themselves with scipy's default ``rank=True`` (both lexicographic orders
  averaged) puts the weight on the best candidates, which is what a recommender is used for: our
  addition beside the reference's (:func:`weighted_tau_top`: top swap 0.89, bottom swap 0.98).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata, weightedtau

__all__ = [
    "pessimistic_order",
    "minmax",
    "ndcg_at_k",
    "hit_at_k",
    "recall_at_k",
    "weighted_tau_bottom",
    "weighted_tau_top",
    "pair_weighted_mean",
]

GAINS = ("linear", "exponential")


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


def _rank0(scores: np.ndarray) -> np.ndarray:
    """Rank of each candidate by decreasing score, 0 = best, ties at their mean rank (the reference's
    ``_to_rank`` without ties)."""
    return rankdata(-scores) - 1.0


def minmax(values) -> np.ndarray:
    """``values`` scaled to [0, 1] within the group (all 0 when they are equal)."""
    v = np.asarray(values, dtype=float)
    span = v.max() - v.min()
    return (v - v.min()) / span if span > 0 else np.zeros_like(v)


def ndcg_at_k(truth, pred, k: int, gain: str = "linear") -> float:
    """NDCG@K of the order of ``pred`` with relevance ``truth`` (non-negative); 1.0 when all gains are 0.

    ``gain="exponential"`` uses ``2^truth - 1`` (the reference's, on min-max scaled truth)."""
    truth, pred = _check(truth, pred)
    if (truth < 0).any():
        raise ValueError("NDCG gains must be non-negative")
    if gain not in GAINS:
        raise ValueError(f"NDCG gain must be one of {GAINS}; got {gain!r}")
    g = np.exp2(truth) - 1.0 if gain == "exponential" else truth
    k = min(int(k), truth.size)
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = float(np.sort(g)[::-1][:k] @ disc)
    if ideal == 0.0:
        return 1.0
    return float(g[pessimistic_order(truth, pred)][:k] @ disc) / ideal


def hit_at_k(truth, pred, k: int) -> float:
    """1.0 when the truly best candidate is among the top ``k`` of ``pred`` (pessimistic ties)."""
    truth, pred = _check(truth, pred)
    top = pessimistic_order(truth, pred)[: int(k)]
    return float(truth[top].max() >= truth.max())


def recall_at_k(truth, pred, k: int) -> float:
    """Share of the true top ``k`` (ties by index) among the predicted top ``k``, out of ``min(k, n)``."""
    truth, pred = _check(truth, pred)
    k = min(int(k), truth.size)
    true_top = np.argsort(-truth, kind="stable")[:k]
    return float(np.intersect1d(pessimistic_order(truth, pred)[:k], true_top).size / k)


def weighted_tau_bottom(truth, pred) -> float:
    """ModelLens' weighted tau: scipy's weightedtau on 0-is-best ranks with ``rank=None`` (weight on the
    truly worst candidates)."""
    truth, pred = _check(truth, pred)
    return _finite(weightedtau(_rank0(truth), _rank0(pred), rank=None).statistic)


def weighted_tau_top(truth, pred) -> float:
    """Top-weighted tau (ours): scipy's weightedtau on the scores, both orders averaged (weight on the best)."""
    truth, pred = _check(truth, pred)
    return _finite(weightedtau(truth, pred).statistic)


def pair_weighted_mean(values, sizes) -> float:
    """Mean of per-group ``values`` weighted by each group's pairs ``n (n - 1) / 2`` (the reference's
    pooling of taus); NaN without a group of two or more."""
    v, n = np.asarray(values, dtype=float), np.asarray(sizes, dtype=float)
    if v.shape != n.shape:
        raise ValueError(f"values and sizes must have one length; got {v.shape} and {n.shape}")
    w = n * (n - 1) / 2
    return float((v * w).sum() / w.sum()) if w.sum() > 0 else float("nan")


def _finite(tau: float) -> float:
    """A constant ranking (scipy's nan) carries no order: tau 0."""
    return 0.0 if not np.isfinite(tau) else float(tau)
