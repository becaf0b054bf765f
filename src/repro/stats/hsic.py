"""Hilbert-Schmidt independence criterion and the NGM choice of the mirror scale.

References: Gretton, Bousquet, Smola, Schoelkopf, "Measuring Statistical Dependence with
Hilbert-Schmidt Norms" (ALT 2005), biased estimator HSIC_b = tr(K H L H) / m^2; Xing, Gui, Dai, Liu,
"Neural Gaussian Mirror" (arXiv:2010.06175): choose c so the two mirror copies are as close to
conditionally independent given the other features as possible, over c in std(x_j) * [0.25, 2].
"""

from __future__ import annotations

import numpy as np

__all__ = ["rbf_gram", "hsic", "choose_mirror_scale"]


def rbf_gram(A: np.ndarray) -> np.ndarray:
    """RBF Gram matrix exp(-||a_i - a_k||^2 / (2 s^2)), s = median pairwise distance (median heuristic)."""
    A = np.asarray(A, dtype=float).reshape(len(A), -1)
    sq = np.sum(A**2, 1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * A @ A.T, 0.0)
    med = np.median(d2[np.triu_indices(len(A), 1)])
    if med <= 0:
        med = 1.0
    return np.exp(-d2 / (2 * med))  # s^2 = median of squared distances


def hsic(A: np.ndarray, B: np.ndarray) -> float:
    """Biased HSIC estimate tr(K H L H) / m^2 with RBF kernels (Gretton et al. 2005, Eq. 4)."""
    K, L = rbf_gram(A), rbf_gram(B)
    m = K.shape[0]
    Kc = K - K.mean(0)[None, :] - K.mean(1)[:, None] + K.mean()
    return float(np.sum(Kc * L) / m**2)


def choose_mirror_scale(X: np.ndarray, J: np.ndarray, Z: np.ndarray, sd: np.ndarray, grid) -> float:
    """The c of ``grid`` minimising HSIC(res(X_J + c Z_J S), res(X_J - c Z_J S)), S = diag(sd_J).

    ``res`` is the OLS residual on the other columns X_-J (a linear stand-in for conditioning on
    x_-j). With a block of one column this is NGM's scalar choice.
    """
    J = np.asarray(J)
    rest = np.delete(X, J, axis=1)
    design = np.column_stack([np.ones(len(X)), rest])
    Qd, _ = np.linalg.qr(design)
    resid = lambda A: A - Qd @ (Qd.T @ A)
    rx, rz = resid(X[:, J]), resid(Z[:, J] * sd[J])
    scores = [hsic(rx + c * rz, rx - c * rz) for c in grid]
    return float(grid[int(np.argmin(scores))])
