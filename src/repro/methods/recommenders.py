"""Model recommendation from leaderboard records: the problem container and the baselines.

A :class:`RecProblem` holds M models and G groups (a group is a (dataset, metric) pair), each
with metadata and text embeddings, a seen flag (has training records) and the training records
per group: model indices and values standardised within the group after turning every metric so
that higher is better. A recommender is registered by name in :data:`RECOMMENDERS`; built with
``RECOMMENDERS.create(name, **options)``, it returns a (M, G) score matrix from
``fit_predict(problem, seed)`` (higher = recommended first within a group).

Baselines (our additions to ModelLens' comparison, arXiv 2605.07075):

- ``popularity``: the same order everywhere, by public download counts.
- ``meta_knn``: a model's score in a group is the mean standardised value of its k nearest seen
  models by metadata (family, log size, log downloads) in the group, or, for a group without
  records, in the seen groups of the same task.
- ``text_knn``: the same with cosine neighbours of the model cards and dataset descriptions.
- ``mf``: matrix factorisation with biases on the training records (alternating ridge); no cold
  start: an unseen model or group has no factor (a seen model keeps its bias on unseen groups;
  unseen models are ordered at random).
- ``random``: the floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.registry import Registry

__all__ = ["RecProblem", "RECOMMENDERS", "standardise", "train_matrix"]

RECOMMENDERS = Registry("recommender")


@dataclass
class RecProblem:
    model_family: np.ndarray      # (M,) int
    model_log_size: np.ndarray    # (M,) float
    model_log_pop: np.ndarray     # (M,) float, public popularity (log downloads)
    model_text: np.ndarray        # (M, E) card embeddings (L2-normalised)
    model_tokens: list[list[str]]  # name tokens per model
    model_seen: np.ndarray        # (M,) bool
    group_text: np.ndarray        # (G, E) description embeddings of the group's dataset
    group_task: np.ndarray        # (G,) int task (metadata) of the group's dataset
    group_metric: np.ndarray      # (G,) int metric id
    group_seen: np.ndarray        # (G,) bool
    train: list[tuple[int, np.ndarray, np.ndarray]]  # (group, model indices, standardised values)

    @property
    def n_models(self) -> int:
        return self.model_family.size

    @property
    def n_groups(self) -> int:
        return self.group_task.size


def standardise(values: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Values of one group turned to higher-is-better and z-scored (0 when all equal)."""
    v = np.asarray(values, dtype=float) * (1.0 if higher_is_better else -1.0)
    sd = v.std()
    return (v - v.mean()) / sd if sd > 0 else np.zeros_like(v)


def train_matrix(problem: RecProblem) -> tuple[np.ndarray, np.ndarray]:
    """(M, G) standardised training values (0 where absent) and the (M, G) presence mask."""
    y = np.zeros((problem.n_models, problem.n_groups))
    mask = np.zeros_like(y, dtype=bool)
    for g, models, vals in problem.train:
        y[models, g], mask[models, g] = vals, True
    return y, mask


def _top_k_weights(sim: np.ndarray, allowed: np.ndarray, k: int) -> np.ndarray:
    """Row-wise uniform weights on the ``k`` most similar allowed columns."""
    sim = np.where(allowed[None, :], sim, -np.inf)
    k = min(k, int(allowed.sum()))
    w = np.zeros_like(sim)
    if k == 0:
        return w
    top = np.argpartition(-sim, k - 1, axis=1)[:, :k]
    np.put_along_axis(w, top, 1.0, axis=1)
    return w


def _neighbour_scores(problem: RecProblem, w_models: np.ndarray, w_groups: np.ndarray) -> np.ndarray:
    """Mean standardised training value over neighbour models x neighbour groups, (M, G).

    ``w_models`` (M, M) and ``w_groups`` (G, G) are neighbour weights; where no neighbour pair has a
    record the score falls back to the neighbour models' mean over all their records.
    """
    y, mask = train_matrix(problem)
    num = w_models @ (y * mask) @ w_groups.T
    den = w_models @ mask.astype(float) @ w_groups.T
    row_num = (w_models @ (y * mask)).sum(axis=1, keepdims=True)
    row_den = (w_models @ mask.astype(float)).sum(axis=1, keepdims=True)
    fallback = np.divide(row_num, row_den, out=np.zeros_like(row_num), where=row_den > 0)
    return np.where(den > 0, num / np.maximum(den, 1e-12), fallback)


def _group_weights_seen_or(problem: RecProblem, sim_groups: np.ndarray, k: int) -> np.ndarray:
    """A seen group is its own neighbour; an unseen group takes its ``k`` most similar seen groups."""
    w = _top_k_weights(sim_groups, problem.group_seen, k)
    seen = np.flatnonzero(problem.group_seen)
    w[seen] = 0.0
    w[seen, seen] = 1.0
    return w


@RECOMMENDERS.register("random")
class RandomScores:
    def fit_predict(self, problem: RecProblem, seed: int) -> np.ndarray:
        return np.random.default_rng(seed).random((problem.n_models, problem.n_groups))


@RECOMMENDERS.register("popularity")
class Popularity:
    def fit_predict(self, problem: RecProblem, seed: int) -> np.ndarray:
        return np.repeat(problem.model_log_pop[:, None], problem.n_groups, axis=1)


@RECOMMENDERS.register("meta_knn")
class MetaKNN:
    """Neighbours by metadata: models by (family, log size, log downloads), groups by task."""

    def __init__(self, k_models: int = 10, k_groups: int = 10) -> None:
        self.k_models, self.k_groups = k_models, k_groups

    def fit_predict(self, problem: RecProblem, seed: int) -> np.ndarray:
        num = np.column_stack([problem.model_log_size, problem.model_log_pop])
        num = (num - num.mean(0)) / np.maximum(num.std(0), 1e-12)
        fam = np.eye(problem.model_family.max() + 1)[problem.model_family] * 3.0   # family dominates distance
        x = np.column_stack([fam, num])
        dist = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
        jitter = np.random.default_rng(seed).random(dist.shape) * 1e-9            # ties among equal metadata
        w_m = _top_k_weights(-dist - jitter, problem.model_seen, self.k_models)
        same_task = problem.group_task[:, None] == problem.group_task[None, :]
        tie = np.random.default_rng(seed + 1).random(same_task.shape) * 1e-9
        w_g = _group_weights_seen_or(problem, same_task + tie, self.k_groups)
        keep = same_task | problem.group_seen[:, None]                            # unseen: same-task only
        w_g = np.where(keep | ~(w_g * same_task).any(1, keepdims=True), w_g, 0.0)
        return _neighbour_scores(problem, w_m, w_g)


@RECOMMENDERS.register("text_knn")
class TextKNN:
    """Neighbours by text: cosine similarity of model cards and of dataset descriptions."""

    def __init__(self, k_models: int = 10, k_groups: int = 5) -> None:
        self.k_models, self.k_groups = k_models, k_groups

    def fit_predict(self, problem: RecProblem, seed: int) -> np.ndarray:
        w_m = _top_k_weights(problem.model_text @ problem.model_text.T, problem.model_seen, self.k_models)
        w_g = _group_weights_seen_or(problem, problem.group_text @ problem.group_text.T, self.k_groups)
        return _neighbour_scores(problem, w_m, w_g)


@RECOMMENDERS.register("mf")
class MatrixFactorisation:
    """``y[m, g] ~ b_m + c_g + u_m . v_g`` by alternating ridge regressions on the training records."""

    def __init__(self, rank: int = 8, ridge: float = 1.0, iters: int = 20) -> None:
        self.rank, self.ridge, self.iters = rank, ridge, iters

    def fit_predict(self, problem: RecProblem, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        y, mask = train_matrix(problem)
        M, G, r = problem.n_models, problem.n_groups, self.rank
        u, v = rng.normal(0, 0.1, (M, r)), rng.normal(0, 0.1, (G, r))
        b, c = np.zeros(M), np.zeros(G)
        eye = self.ridge * np.eye(r + 1)
        for _ in range(self.iters):
            for m in range(M):                        # model side: [u_m, b_m] given (v_g, c_g)
                gs = np.flatnonzero(mask[m])
                if gs.size:
                    a = np.column_stack([v[gs], np.ones(gs.size)])
                    sol = np.linalg.solve(a.T @ a + eye, a.T @ (y[m, gs] - c[gs]))
                    u[m], b[m] = sol[:r], sol[r]
            for g in range(G):                        # group side
                ms = np.flatnonzero(mask[:, g])
                if ms.size:
                    a = np.column_stack([u[ms], np.ones(ms.size)])
                    sol = np.linalg.solve(a.T @ a + eye, a.T @ (y[ms, g] - b[ms]))
                    v[g], c[g] = sol[:r], sol[r]
        has_m, has_g = mask.any(1), mask.any(0)
        u[~has_m], b[~has_m], v[~has_g], c[~has_g] = 0.0, 0.0, 0.0, 0.0
        scores = b[:, None] + c[None, :] + u @ v.T
        return scores + rng.random(scores.shape) * 1e-6   # no cold start: ties (unseen models) in random order
