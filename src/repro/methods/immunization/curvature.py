"""Curvature of a loss at parameters: Hessian-vector products, extremal eigenvalues, condition number.

The Hessian-vector product is forward-over-reverse (``torch.func.jvp`` of ``torch.func.grad``), so
it costs about two gradients and never forms the Hessian. Extremal eigenvalues come from the
shared Lanczos (``repro.stats.lanczos``): the largest from H, the smallest as minus the largest of
-H. ``exact_hessian`` (``torch.func.hessian``) is the reference the tests and the timing figure
compare against.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch.func import grad, hessian, jvp

from repro.stats.lanczos import lanczos_eigenvalues

__all__ = ["hvp", "exact_hessian", "extremal_eigenvalues", "condition_number"]

Loss = Callable[[torch.Tensor], torch.Tensor]


def hvp(loss: Loss, params: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(params) @ v for a scalar ``loss`` of a flat parameter vector."""
    if params.ndim != 1 or v.shape != params.shape:
        raise ValueError(f"hvp: need flat params and v of the same shape; got {tuple(params.shape)}, {tuple(v.shape)}")
    return jvp(grad(loss), (params,), (v,))[1]


def exact_hessian(loss: Loss, params: torch.Tensor) -> torch.Tensor:
    """The dense D x D Hessian of ``loss`` at flat ``params`` (reference; O(D) gradients)."""
    return hessian(loss)(params)


def extremal_eigenvalues(loss: Loss, params: torch.Tensor, *, n_iter: int | None = None, seed: int = 0) -> tuple[float, float]:
    """(lambda_min, lambda_max) of the Hessian at ``params`` by Lanczos on products only."""
    dim = params.numel()
    dtype = params.dtype

    def matvec(sign: float):
        def mv(x: np.ndarray) -> np.ndarray:
            v = torch.as_tensor(x, dtype=dtype)
            return sign * hvp(loss, params.detach(), v).detach().double().numpy()
        return mv

    lam_max = float(lanczos_eigenvalues(matvec(1.0), dim, k=1, n_iter=n_iter, seed=seed)[0])
    lam_min = -float(lanczos_eigenvalues(matvec(-1.0), dim, k=1, n_iter=n_iter, seed=seed + 1)[0])
    return lam_min, lam_max


def condition_number(eigs: tuple[float, float]) -> float:
    """kappa = |lambda_max| / |lambda_min| (inf when lambda_min is 0)."""
    lam_min, lam_max = eigs
    return float("inf") if lam_min == 0 else abs(lam_max) / abs(lam_min)
