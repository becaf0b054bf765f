"""The local learning coefficient (LLC) by SGLD, and its Laplace (quadratic) prediction.

Implements the estimator of Lau, Furman, Wang, Murfet and Wei, "The Local Learning Coefficient: A
Singularity-Aware Complexity Measure" (arXiv 2308.12108), Def. 3 and §4: around a local minimum
w* of the empirical loss L_n (mean negative log-likelihood over n points), sample the localised
tempered posterior

    p(w) ∝ exp(-n β L_n(w) - γ/2 ||w - w*||²),      β = 1 / log n  (Watanabe's WBIC temperature)

with Langevin dynamics, and estimate

    λ̂(w*) = n β (E_w[L_n(w)] - L_n(w*)).

For a regular model λ̂ → d/2 (d parameters); at a singular point it estimates the real log canonical
threshold (RLCT) of the local loss; for a loss Σ_i |w_i|^{p_i} the exact tempered-posterior value
(γ → 0) is Σ_i 1/p_i, since E[a|w|^p] = 1/p under a density ∝ exp(-a|w|^p).

Choices the reference leaves open, taken here:
- Full-batch gradients (Langevin, not stochastic-gradient Langevin): the models here have at most
  a few thousand points, and the minibatch noise of SGLD is a bias we need not add. The update is
  w ← w - ε/2 (nβ ∇L_n(w) + γ (w - w*)) + N(0, ε I).
- The interval of λ̂ is the spread of the per-chain estimates (independent chains from w*).

:func:`quadratic_llc` gives what the estimator returns when L_n is exactly quadratic with Hessian
eigenvalues h_i: ½ Σ_i nβh_i / (nβh_i + γ) (the stationary law is Gaussian); directions with
nβh ≪ γ contribute nothing, which is how curvature that fades with a component's weight lowers λ̂.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["LLCEstimate", "sgld_llc", "quadratic_llc", "wbic_beta"]

log = logging.getLogger(__name__)


def wbic_beta(n: int) -> float:
    """β = 1 / log n, the inverse temperature of WBIC (Watanabe 2013) used by the LLC estimator."""
    if n < 2:
        raise ValueError(f"the LLC needs n >= 2 data points; got n={n}")
    return 1.0 / math.log(n)


@dataclass(frozen=True)
class LLCEstimate:
    """λ̂ and its pieces: per-chain estimates, L_n(w*), the mean sampled loss, the settings."""

    llc: float
    llc_se: float
    per_chain: tuple[float, ...]
    loss_star: float
    mean_loss: float
    n: int
    beta: float
    gamma: float
    step: float

    def as_dict(self) -> dict:
        return {"llc": self.llc, "llc_se": self.llc_se, "per_chain": list(self.per_chain), "loss_star": self.loss_star,
                "mean_loss": self.mean_loss, "n": self.n, "beta": self.beta, "gamma": self.gamma, "step": self.step}


def sgld_llc(loss_grad: Callable[[np.ndarray], tuple[float, np.ndarray]], w_star: np.ndarray, n: int, *, beta: float | None = None, gamma: float = 1.0, step: float = 1e-4, n_steps: int = 2000,
             burn_in: int = 500, n_chains: int = 2, seed: int = 0) -> LLCEstimate:
    """Estimate the local learning coefficient of ``loss`` at ``w_star`` (Lau et al. 2023, Def. 3).

    Parameters
    ----------
    loss_grad : w -> (L_n(w), ∇L_n(w)), the mean negative log-likelihood and its gradient at a flat
        vector w (one call per step: the loss recorded is the one at the point the step leaves).
    w_star : the local minimum (the fitted parameter), shape (D,).
    n : the number of data points in L_n (sets nβ).
    beta : inverse temperature; default 1 / log n.
    gamma : localisation strength γ of the Gaussian prior around w*.
    step : Langevin step ε; must satisfy ε nβ h_max < 2 (h_max: the loss's top curvature).
    n_steps, burn_in : steps per chain, of which the first ``burn_in`` are discarded.
    n_chains : independent chains started at w*; λ̂ is their mean, its standard error their spread.
    seed : seeds the chains' noise.
    """
    if burn_in >= n_steps:
        raise ValueError(f"burn_in ({burn_in}) must be below n_steps ({n_steps})")
    if step <= 0 or gamma < 0:
        raise ValueError(f"the LLC needs step > 0 and gamma >= 0; got step={step}, gamma={gamma}")
    beta = wbic_beta(n) if beta is None else float(beta)
    w_star = np.asarray(w_star, dtype=float)
    rng = np.random.default_rng(seed)
    l_star = float(loss_grad(w_star)[0])
    nb = n * beta
    sqrt_step = math.sqrt(step)
    per_chain, means = [], []
    for _ in range(n_chains):
        w = w_star.copy()
        total, count = 0.0, 0
        for t in range(n_steps):
            value, g = loss_grad(w)
            if not math.isfinite(value):
                raise ValueError(f"LLC: the chain left the model's domain at step {t} (loss {value}); "
                                 f"lower the step (now {step}) or raise gamma (now {gamma})")
            if t >= burn_in:
                total += value
                count += 1
            w = w - 0.5 * step * (nb * g + gamma * (w - w_star)) + sqrt_step * rng.standard_normal(w.shape)
        mean_loss = total / count
        means.append(mean_loss)
        per_chain.append(nb * (mean_loss - l_star))
    est = float(np.mean(per_chain))
    se = float(np.std(per_chain, ddof=1) / math.sqrt(n_chains)) if n_chains > 1 else math.nan
    return LLCEstimate(est, se, tuple(float(v) for v in per_chain), l_star, float(np.mean(means)), int(n), beta,
                       float(gamma), float(step))


def quadratic_llc(curvatures, n: int, *, beta: float | None = None, gamma: float = 1.0) -> float:
    """What :func:`sgld_llc` converges to (ε → 0) for a quadratic loss with Hessian eigenvalues ``curvatures``.

    ½ Σ_i nβh_i / (nβh_i + γ): the exact mean of nβ(L - L*) under the Gaussian localised posterior.
    """
    beta = wbic_beta(n) if beta is None else float(beta)
    h = np.clip(np.asarray(curvatures, dtype=float), 0.0, None)
    a = n * beta * h
    return float(0.5 * np.sum(a / (a + gamma))) if gamma > 0 else 0.5 * float(np.sum(h > 0))
