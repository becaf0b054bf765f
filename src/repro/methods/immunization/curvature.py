"""Curvature of a loss at parameters: Hessian-vector products, extremal eigenvalues, condition number.

The Hessian-vector product is forward-over-reverse (``torch.func.jvp`` of ``torch.func.grad``), so
it costs about two gradients and never forms the Hessian. Extremal eigenpairs come from one run of
the shared Lanczos (``repro.stats.lanczos.lanczos_ritz``): both ends of the spectrum are the extreme
Ritz pairs of the same Krylov space, the largest a lower bound on lambda_max and the smallest an
upper bound on lambda_min (interlacing), exact once the run spans the space. ``extremal_ritz`` is the
one estimator, on any Hessian-vector product: the defences' curvature terms run it on the probe
Hessian's closed-form product (``regularizers.gram_extremal``), the timing figure on an MLP's autodiff
products (``extremal_pairs`` / ``extremal_eigenvalues``, where no closed form exists). ``exact_hessian`` (``torch.func.hessian``) is the reference the
tests and the timing figure compare against.

Until 2026-12-06 the smallest eigenvalue came from a second Lanczos run on -H (another start vector):
the same Krylov space's information at twice the products.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch.func import grad, hessian, jvp

from repro.stats.lanczos import lanczos_ritz

__all__ = ["hvp", "exact_hessian", "extremal_ritz", "extremal_pairs", "extremal_eigenvalues", "condition_number"]

Loss = Callable[[torch.Tensor], torch.Tensor]


def hvp(loss: Loss, params: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(params) @ v for a scalar ``loss`` of a flat parameter vector."""
    if params.ndim != 1 or v.shape != params.shape:
        raise ValueError(f"hvp: need flat params and v of the same shape; got {tuple(params.shape)}, {tuple(v.shape)}")
    return jvp(grad(loss), (params,), (v,))[1]


def exact_hessian(loss: Loss, params: torch.Tensor) -> torch.Tensor:
    """The dense D x D Hessian of ``loss`` at flat ``params`` (reference; O(D) gradients)."""
    return hessian(loss)(params)


def extremal_ritz(product: Callable[[torch.Tensor], torch.Tensor], dim: int, *, dtype: torch.dtype = torch.float64,
                  n_iter: int | None = None, seed: int = 0) -> tuple[tuple[float, np.ndarray], tuple[float, np.ndarray]]:
    """((lambda_min, u_min), (lambda_max, u_max)) of the symmetric operator ``product`` (a Hessian-vector
    product on R^dim): the extreme Ritz pairs of one Lanczos run of ``n_iter`` steps (default ``min(dim, 30)``)."""

    def mv(x: np.ndarray) -> np.ndarray:
        return product(torch.as_tensor(x, dtype=dtype)).detach().double().numpy()

    ritz, vecs = lanczos_ritz(mv, dim, n_iter=n_iter or 30, seed=seed)
    return (float(ritz[0]), vecs[0]), (float(ritz[-1]), vecs[-1])


def extremal_pairs(loss: Loss, params: torch.Tensor, *, n_iter: int | None = None, seed: int = 0
                   ) -> tuple[tuple[float, np.ndarray], tuple[float, np.ndarray]]:
    """``extremal_ritz`` on the Hessian of ``loss`` at ``params`` through ``hvp`` (products only)."""
    at = params.detach()
    return extremal_ritz(lambda v: hvp(loss, at, v), params.numel(), dtype=params.dtype, n_iter=n_iter, seed=seed)


def extremal_eigenvalues(loss: Loss, params: torch.Tensor, *, n_iter: int | None = None, seed: int = 0) -> tuple[float, float]:
    """(lambda_min, lambda_max) of the Hessian at ``params`` by Lanczos on products only (``extremal_pairs``)."""
    (lam_min, _), (lam_max, _) = extremal_pairs(loss, params, n_iter=n_iter, seed=seed)
    return lam_min, lam_max


def condition_number(eigs: tuple[float, float]) -> float:
    """kappa = |lambda_max| / |lambda_min| (inf when lambda_min is 0)."""
    lam_min, lam_max = eigs
    return float("inf") if lam_min == 0 else abs(lam_max) / abs(lam_min)
