"""Top eigenvalues of a symmetric operator known only through products (a Hessian-vector product).

Lanczos iteration with full reorthogonalisation (Golub and Van Loan, "Matrix Computations", 4th ed.,
§10.1): m steps build an orthonormal Krylov basis Q and a tridiagonal T = Q^T A Q whose extreme
eigenvalues (Ritz values) converge first to A's extreme eigenvalues. Full reorthogonalisation costs
O(m² D) but keeps the Ritz values free of the spurious copies plain Lanczos produces; for the model
sizes here (D up to a few hundred thousand, m up to ~100) that is cheap beside the products.
``lanczos_ritz`` returns every Ritz pair of one run (both ends of the spectrum from the same Krylov
space); ``lanczos_eigenvalues`` the top ``k`` values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["lanczos_eigenvalues", "lanczos_ritz"]


def lanczos_ritz(matvec: Callable[[np.ndarray], np.ndarray], dim: int, *, n_iter: int, seed: int = 0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(Ritz values ascending, Ritz vectors as rows) of ``n_iter`` Lanczos steps on the symmetric operator ``matvec``.

    The start vector is standard normal from ``seed``; at most ``dim`` steps. An invariant subspace
    found early (β = 0) stops the iteration: its Ritz values are then exact. Each Ritz pair (θ, u)
    has u^T A u = θ, and θ_min >= λ_min(A), θ_max <= λ_max(A) (Cauchy interlacing).
    """
    if dim < 1 or n_iter < 1:
        raise ValueError(f"lanczos: need dim >= 1 and n_iter >= 1; got dim={dim}, n_iter={n_iter}")
    m = min(dim, n_iter)
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(dim)
    q /= np.linalg.norm(q)
    Q = np.zeros((m, dim))
    alpha, beta = np.zeros(m), np.zeros(m)
    steps = m
    for j in range(m):
        Q[j] = q
        v = np.asarray(matvec(q), dtype=float)
        alpha[j] = q @ v
        v = v - Q[: j + 1].T @ (Q[: j + 1] @ v)  # full reorthogonalisation (twice is enough, Kahan)
        v = v - Q[: j + 1].T @ (Q[: j + 1] @ v)
        beta[j] = np.linalg.norm(v)
        if beta[j] < 1e-10 * max(1.0, abs(alpha[j])) or j == m - 1:
            steps = j + 1
            break
        q = v / beta[j]
    T = np.diag(alpha[:steps]) + np.diag(beta[: steps - 1], 1) + np.diag(beta[: steps - 1], -1)
    ritz, y = np.linalg.eigh(T)
    return ritz, (Q[:steps].T @ y).T


def lanczos_eigenvalues(matvec: Callable[[np.ndarray], np.ndarray], dim: int, *, k: int = 5, n_iter: int | None = None,
                        seed: int = 0) -> np.ndarray:
    """The ``k`` largest eigenvalues (descending) of the symmetric operator ``matvec`` on R^dim.

    ``n_iter`` Lanczos steps (default ``min(dim, max(2k + 10, 30))``; ``lanczos_ritz``); the Ritz
    values of the tridiagonal matrix approximate the extreme eigenvalues.
    """
    if dim < 1 or k < 1:
        raise ValueError(f"lanczos: need dim >= 1 and k >= 1; got dim={dim}, k={k}")
    ritz, _ = lanczos_ritz(matvec, dim, n_iter=n_iter or max(2 * k + 10, 30), seed=seed)
    return ritz[::-1][:k]
