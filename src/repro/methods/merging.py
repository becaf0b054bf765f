"""Merging a new task's update into the previous weights from a second-order joint-loss estimate.

Two solutions of the same objective, used by the m2le rebuild (M²LE, NeurIPS 2026; abstract only)
and by its closest prior with public equations, Perturb-and-Merge (P&M, arXiv 2505.22389, §3).

The joint objective (P&M Eq. 5-7). After task ``t`` is trained, the weights are
``theta_{t-1} + Delta`` (``Delta`` the task's update, for LoRA the product ``B A``). Each task
``i <= t`` has a minimiser ``theta_i*`` and a diagonal curvature ``h_i`` (empirical Fisher), so
its loss near the weights is ``L_i(theta) ~ L_i(theta_i*) + 1/2 (theta - theta_i*)^T H_i (theta - theta_i*)``.
The merged weights minimise ``J(theta) = sum_i L_i(theta)``.

- **Scalar** (P&M Eq. 8): restrict ``theta = theta_{t-1} + alpha Delta``. Setting dJ/dalpha = 0,
  with ``d_i = theta_i* - theta_{t-1}``:

      alpha* = sum_i d_i^T H_i Delta / sum_i Delta^T H_i Delta.              (S1)

- **Element-wise** (HIM, M²LE): solve for the merged update ``u`` itself, ``theta = theta_{t-1} + u``.
  With diagonal ``H_i`` the objective separates over elements, ``dJ/du_k = sum_i h_ik (u_k - d_ik) = 0``:

      u_k = sum_i h_ik d_ik / sum_i h_ik,                                    (E1)

  the exact joint minimum. Written as a modulation of the current update, ``u = m ⊙ Delta`` with
  ``m_k = u_k / Delta_k``. In continual learning the previous optima are not stored: both P&M and
  M²LE take the previous weights as the previous tasks' optimum (``d_i = 0`` for ``i < t``) and
  ``d_t = Delta``. Then (E1) becomes the curvature ratio

      m_k = h_tk / (h_tk + sum_{i<t} h_ik),                                  (E2)

  and (S1) becomes ``alpha* = Delta^T H_t Delta / Delta^T (H_t + sum_{i<t} H_i) Delta``. Each
  ``m_k`` lies in [0, 1]. If every task's curvature has the same profile across elements
  (``h_i = c_i g``, e.g. all isotropic), ``m_k = c_t / sum_i c_i = alpha*`` for every ``k``: HIM
  reduces to the scalar optimum (tests/m2le/test_merging.py checks both).

**Choices the spec leaves open.**
- Where the curvature vanishes (``h_tk + sum h_ik ~ 0``) (E2) is 0/0. We add a damping term
  ``lambda/2 ||u - alpha* Delta||^2`` to J, which pulls ``m_k`` to the scalar optimum there:
  ``m_k = (h_tk + lambda alpha*) / (h_tk + sum h_ik + lambda)``; ``lambda = damping * mean(h_t + sum h_i)``
  (relative, so it is scale free). ``damping = 0`` gives (E2) exactly. Then ``m`` is clipped to
  ``[0, m_max]`` (a no-op for (E2), which stays in [0, 1]; it guards the general form E1).
- The modulation acts on the LoRA product ``Delta W = B A`` (the dense weight update, elementwise),
  not on the factors: the curvature is that of the dense weight, and ``m ⊙ (B A)`` is not a
  product of modulated factors.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["joint_quadratic", "joint_minimiser", "scalar_optimum", "elementwise_modulation", "pm_alpha", "spread"]


def _stack(xs) -> torch.Tensor:
    return torch.stack([torch.as_tensor(x, dtype=torch.float64) for x in xs])


def joint_quadratic(theta, optima, curvatures) -> float:
    """``J(theta) = 1/2 sum_i (theta - theta_i*)^T diag(h_i) (theta - theta_i*)`` (P&M Eq. 7, constants dropped)."""
    theta = torch.as_tensor(theta, dtype=torch.float64)
    return float(0.5 * ((theta - _stack(optima)) ** 2 * _stack(curvatures)).sum())


def joint_minimiser(theta_prev, optima, curvatures, *, damping: float = 0.0) -> torch.Tensor:
    """The merged update ``u`` minimising the joint quadratic over ``theta_prev + u`` (Eq. E1).

    ``damping`` adds ``lambda/2 ||u - alpha* Delta||^2`` with ``lambda = damping * mean(sum_i h_i)``,
    where ``Delta = optima[-1] - theta_prev`` is the current task's update.
    """
    theta_prev = torch.as_tensor(theta_prev, dtype=torch.float64)
    h, d = _stack(curvatures), _stack(optima) - theta_prev
    if (h < 0).any():
        raise ValueError("curvatures must be non-negative (a diagonal Fisher is)")
    num, den = (h * d).sum(0), h.sum(0)
    if damping > 0:
        lam = damping * float(den.mean())
        delta = d[-1]
        num, den = num + lam * scalar_optimum(theta_prev, optima, curvatures) * delta, den + lam
    if (den <= 0).any():
        raise ValueError("an element has zero total curvature: set damping > 0")
    return num / den


def scalar_optimum(theta_prev, optima, curvatures) -> float:
    """P&M's optimal scalar (Eq. S1) for ``theta_prev + alpha * Delta``, ``Delta = optima[-1] - theta_prev``."""
    theta_prev = torch.as_tensor(theta_prev, dtype=torch.float64)
    h, d = _stack(curvatures), _stack(optima) - theta_prev
    delta = d[-1]
    den = float((h * delta**2).sum())
    if den <= 0:
        raise ValueError("Delta^T H Delta is zero: the update has no curvature to weigh it")
    return float((h * d * delta).sum()) / den


def pm_alpha(delta: torch.Tensor, h_current: torch.Tensor, h_previous: torch.Tensor) -> float:
    """P&M's scalar with the previous weights as the previous optimum: ``D^T H_t D / D^T (H_t + H_<t) D``."""
    w = delta.double() ** 2
    den = float((w * (h_current + h_previous).double()).sum())
    return float((w * h_current.double()).sum()) / den if den > 0 else 1.0


def elementwise_modulation(h_current: torch.Tensor, h_previous: torch.Tensor, alpha: float, *,
                           damping: float = 1e-3, m_max: float = 1.0) -> torch.Tensor:
    """HIM's modulation ``m`` (Eq. E2 with damping toward ``alpha``), same shape as the curvatures.

    Parameters
    ----------
    h_current, h_previous
        Diagonal curvature of the current task at its trained weights, and the summed curvature
        of the previous tasks (each at the weights after its own merge).
    alpha
        The scalar optimum the damping pulls to where the curvature vanishes (``pm_alpha``).
    damping
        ``lambda / mean(h_current + h_previous)``; 0 gives the undamped curvature ratio.
    """
    if damping < 0 or m_max <= 0:
        raise ValueError(f"damping must be >= 0 and m_max > 0; got {damping}, {m_max}")
    total = (h_current + h_previous).double()
    lam = damping * float(total.mean())
    den = total + lam
    safe = torch.where(den > 0, den, torch.ones_like(den))
    m = torch.where(den > 0, (h_current.double() + lam * alpha) / safe, torch.full_like(den, float(alpha)))
    return m.clamp(0.0, m_max).to(h_current.dtype)


def spread(m: torch.Tensor | np.ndarray) -> float:
    """Standard deviation of the modulation across elements (0 for a scalar merge)."""
    return float(np.std(np.asarray(m, dtype=float)))
