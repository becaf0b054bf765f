"""Patch graphs of one slide: the 8-neighbourhood on the patch grid and kNN on coordinates.

Neighbourhoods are stored as padded index tensors ``(N, M)`` with ``-1`` where a neighbour is
absent, so message passing is a ``gather`` plus a mask (no sparse-matrix dependency).
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["grid_positions", "grid_neighbours", "knn_neighbours", "gather_neighbours", "neighbour_sum", "SparseEdges", "DenseEdges", "OFFSETS8"]

#: The 8 neighbour offsets (dx, dy) in grid units, in a fixed order.
OFFSETS8 = np.array([(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)], dtype=np.int64)


def grid_positions(coords: np.ndarray, step: int) -> np.ndarray:
    """Level-0 top-left corners (N, 2) -> integer grid positions (N, 2), origin at the minimum.

    Raises ``ValueError`` when a coordinate is off the grid of side ``step`` (the WSI contract
    promises a regular, non-overlapping grid).
    """
    coords = np.asarray(coords, dtype=np.int64)
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise ValueError(f"coords must be (N, 2); got {coords.shape}")
    if step <= 0:
        raise ValueError(f"grid step must be positive; got {step}")
    rel = coords - coords.min(axis=0, keepdims=True)
    if np.any(rel % step):
        raise ValueError(f"patch coordinates are not on a grid of step {step} (patch_size_level0)")
    return rel // step


def grid_neighbours(grid: np.ndarray) -> np.ndarray:
    """Indices (N, 8) of the 8-neighbours of each patch on the grid, ``-1`` where absent."""
    grid = np.asarray(grid, dtype=np.int64)
    index = {(int(x), int(y)): i for i, (x, y) in enumerate(grid)}
    if len(index) != len(grid):
        raise ValueError("two patches share one grid position")
    out = np.full((len(grid), len(OFFSETS8)), -1, dtype=np.int64)
    for i, (x, y) in enumerate(grid):
        for m, (dx, dy) in enumerate(OFFSETS8):
            out[i, m] = index.get((int(x + dx), int(y + dy)), -1)
    return out


def knn_neighbours(points: np.ndarray, k: int) -> np.ndarray:
    """Indices (N, k) of the k nearest other points (Euclidean), ``-1`` padding when N <= k."""
    pts = torch.as_tensor(np.asarray(points, dtype=np.float32))
    n = len(pts)
    kk = min(k, n - 1)
    out = np.full((n, k), -1, dtype=np.int64)
    if kk <= 0:
        return out
    dist = torch.cdist(pts, pts)                          # (N, N)
    dist.fill_diagonal_(float("inf"))
    out[:, :kk] = torch.topk(dist, kk, largest=False).indices.numpy()  # ties broken by index order
    return out


def gather_neighbours(values: torch.Tensor, nbr: torch.Tensor) -> torch.Tensor:
    """``values`` (N, ...) gathered at ``nbr`` (N, M) -> (N, M, ...); absent neighbours give zeros.

    Implemented as one index into ``values`` padded with a zero row (no mask multiply).
    """
    n = values.shape[0]
    padded = torch.cat([values, values.new_zeros((1, *values.shape[1:]))], dim=0)  # (N+1, ...)
    return padded[torch.where(nbr >= 0, nbr, n)]


def neighbour_sum(weights: torch.Tensor, values: torch.Tensor, nbr: torch.Tensor) -> torch.Tensor:
    """``sum_j w_ij (v_j - v_i)`` over the neighbours j of each i: (N, M), (N, d), (N, M) -> (N, d).

    ``weights`` must be zero where a neighbour is absent.
    """
    pulled = torch.einsum("nm,nmd->nd", weights, gather_neighbours(values, nbr))  # sum_j w_ij v_j
    return pulled - weights.sum(1, keepdim=True) * values


class SparseEdges:
    """Edge operations on a padded neighbour index (N, M): edge tensors are (N, M), zero off-graph.

    The readable path, and the one whose memory grows as N (used above ``dense_max`` patches).
    """

    def __init__(self, nbr: torch.Tensor) -> None:
        self.nbr = nbr
        self.mask = (nbr >= 0).float()                                         # (N, M)

    def pair_dot(self, X: torch.Tensor) -> torch.Tensor:
        """``X_i . X_j`` on every edge (i, j)."""
        return (X.unsqueeze(1) * gather_neighbours(X, self.nbr)).sum(-1)      # (N, M)

    def diff(self, a: torch.Tensor) -> torch.Tensor:
        """``a_j - a_i`` on every edge, for a scalar field a (N,)."""
        return (gather_neighbours(a, self.nbr) - a.unsqueeze(1)) * self.mask

    def direction(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``(u_i - u_j) . v_j`` on every edge."""
        u_diff = u.unsqueeze(1) - gather_neighbours(u, self.nbr)              # (N, M, 2)
        return (u_diff * gather_neighbours(v, self.nbr)).sum(-1) * self.mask

    def nsum(self, w: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``sum_j w_ij (v_j - v_i)`` (w zero off-graph)."""
        return neighbour_sum(w, v, self.nbr)


class DenseEdges:
    """The same operations with a dense (N, N) adjacency: matrix products, fast for a few thousand patches."""

    def __init__(self, nbr: torch.Tensor) -> None:
        n = nbr.shape[0]
        self.mask = torch.zeros(n, n + 1)
        self.mask.scatter_(1, torch.where(nbr >= 0, nbr, n), 1.0)
        self.mask = self.mask[:, :n].contiguous()                              # (N, N) adjacency A

    def pair_dot(self, X: torch.Tensor) -> torch.Tensor:
        return (X @ X.T) * self.mask

    def diff(self, a: torch.Tensor) -> torch.Tensor:
        return (a.unsqueeze(0) - a.unsqueeze(1)) * self.mask

    def direction(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return (u @ v.T - (u * v).sum(-1).unsqueeze(0)) * self.mask          # [i, j] = u_i.v_j - u_j.v_j

    def nsum(self, w: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return w @ v - w.sum(1, keepdim=True) * v
