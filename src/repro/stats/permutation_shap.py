"""Permutation SHAP values and their smoothed derivatives (block importances of mirror copies).

Permutation SHAP (Strumbelj & Kononenko 2014; shap's ``PermutationExplainer``, Lundberg & Lee 2017):
for a random ordering pi of the M features, walk forward adding features of x to a background row
and credit each feature with the change in f, then walk back removing them in the same order
(antithetic pass); average over the background rows (interventional value function) and passes.
For an additive f(x) = sum_k g_k(x_k) every ordering gives the exact Shapley value
phi_k(x) = g_k(x_k) - mean_b g_k(b_k); the tests check ours against shap's explainer on such an f.

The "SHAP derivative" of sub-feature k is the slope of phi_k against x_k; we smooth it with a
local-linear fit (Gaussian kernel, Silverman bandwidth) and evaluate it at the explained rows.
For a linear model phi_k(x) = beta_k (x_k - mean_b x_k), so the derivative is beta_k everywhere.
"""

from __future__ import annotations

import numpy as np

__all__ = ["permutation_shap", "shap_permutation_explainer", "smoothed_derivatives"]


def permutation_shap(f, X: np.ndarray, background: np.ndarray, *, n_permutations: int = 1,
                     rng: np.random.Generator) -> np.ndarray:
    """Permutation SHAP values (m, M) of ``f`` at the rows of ``X`` against ``background`` (k, M).

    One random ordering per row and pass pair (forward then reverse), as in shap's explainer.
    """
    X = np.asarray(X, dtype=float)
    background = np.asarray(background, dtype=float)
    m, M = X.shape
    k = len(background)
    phi = np.zeros((m, M))
    for i in range(m):
        for _ in range(n_permutations):
            order = rng.permutation(M)
            # forward pass: states s = 0..M, features order[:s] taken from x_i
            fwd = np.repeat(np.arange(M + 1)[:, None] > np.arange(M)[None, :], 1, axis=0)  # (M+1, M) by position
            mask = np.zeros((M + 1, M), dtype=bool)
            mask[:, order] = fwd
            hybrid = np.where(mask[:, None, :], X[i][None, None, :], background[None, :, :])  # (M+1, k, M)
            v = f(hybrid.reshape(-1, M)).reshape(M + 1, k).mean(1)
            phi[i, order] += np.diff(v)
            # reverse pass: from all-of-x remove features in the same order (antithetic ordering)
            rev = ~mask  # state s: features order[:s] reset to background
            hybrid = np.where(rev[:, None, :], X[i][None, None, :], background[None, :, :])
            v = f(hybrid.reshape(-1, M)).reshape(M + 1, k).mean(1)
            phi[i, order] += -np.diff(v)
    return phi / (2 * n_permutations)


def shap_permutation_explainer(f, X: np.ndarray, background: np.ndarray, *, n_permutations: int = 1,
                               seed: int = 0) -> np.ndarray:
    """The same values from the ``shap`` package's ``PermutationExplainer`` (Independent masker)."""
    import shap

    masker = shap.maskers.Independent(np.asarray(background, dtype=float), max_samples=len(background))
    explainer = shap.PermutationExplainer(f, masker, seed=seed)
    M = np.asarray(X).shape[1]
    out = explainer(np.asarray(X, dtype=float), max_evals=n_permutations * (2 * M + 1), silent=True)
    return np.asarray(out.values)


def smoothed_derivatives(X: np.ndarray, phi: np.ndarray, *, bandwidth_scale: float = 1.0) -> np.ndarray:
    """Local-linear slope of phi[:, k] against X[:, k] at each row (Gaussian kernel), shape (m, M).

    Bandwidth h_k = bandwidth_scale * 1.06 * sd(X[:, k]) * m^(-1/5) (Silverman); a constant column
    gets slope 0. As h grows the slope tends to the least-squares slope of phi_k on x_k.
    """
    X = np.asarray(X, dtype=float)
    phi = np.asarray(phi, dtype=float)
    m, M = X.shape
    out = np.zeros((m, M))
    for k in range(M):
        x, v = X[:, k], phi[:, k]
        sd = x.std()
        if sd == 0:
            continue
        h = bandwidth_scale * 1.06 * sd * m ** (-0.2)
        w = np.exp(-0.5 * ((x[:, None] - x[None, :]) / h) ** 2)  # (eval point, data point)
        sw = w.sum(1)
        xm = (w @ x) / sw
        vm = (w @ v) / sw
        dx = x[None, :] - xm[:, None]
        cov = np.sum(w * dx * (v[None, :] - vm[:, None]), 1)
        var = np.sum(w * dx**2, 1)
        out[:, k] = np.where(var > 0, cov / np.maximum(var, 1e-300), 0.0)
    return out
