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

  the exact joint minimum. Written as a modulation of the current update, ``u = m ⊙ Delta``:
  restricting ``theta = theta_{t-1} + m ⊙ Delta`` and solving for ``m`` gives the same point,

      m_k = (h_tk Delta_k + sum_{i<t} h_ik d_ik) / ((h_tk + sum_{i<t} h_ik) Delta_k),      (E1')

  the element-wise counterpart of (S1), whose numerator and denominator are those of (E1') times
  ``Delta_k``, summed over ``k``. This is M²LE's "element-wise modulation over the current task's update".

**Each task's own optimum (the default).** P&M's objective (Eq. 5-7) expands each task's loss
around that task's own optimum ``theta_i* = theta_{i-1} + Delta_i``: the weights its adapter reached
before its merge. Keeping, per adapted layer, the running sums ``sum_{i<t} h_i`` and
``sum_{i<t} h_i ⊙ theta_i*`` (``OptimaMemory``) gives the pull of the earlier tasks,
``g = sum_{i<t} h_i ⊙ d_i = sum_i h_i ⊙ theta_i* - (sum_i h_i) ⊙ theta_{t-1}``, at constant memory,
and (E1') and (S1) read

      m_k = (h_tk + g_k / Delta_k) / (h_tk + sum_{i<t} h_ik),                (E2)
      alpha* = (Delta^T H_t Delta + Delta^T g) / Delta^T (H_t + sum_{i<t} H_i) Delta.

A previous task whose own optimum lies beyond ``theta_{t-1}`` in the direction of ``Delta``
(``g_k Delta_k > 0``: its update was shrunk by its merge and the new one restores it) raises ``m_k``;
one on the other side lowers it.

**The earlier tasks at the merged weights (variant ``merged``).** Taking ``theta_{t-1}`` as every
earlier task's optimum (``d_i = 0`` for ``i < t``, ``g = 0``) turns (E2) into the curvature ratio
``m_k = h_tk / (h_tk + sum_{i<t} h_ik)`` and (S1) into
``alpha* = Delta^T H_t Delta / Delta^T (H_t + sum_{i<t} H_i) Delta``. This is the first form of this
rebuild, kept as a named variant; it is not P&M's published objective. Both forms share the
denominator ``h_t + sum_{i<t} h_i``: with alike curvatures each merge keeps about ``1/t`` of an
update in either, unless the pull ``g`` (own optima only) adds some back. If every task's curvature has the
same profile across elements (``h_i = c_i v``), ``m_k = c_t / sum_i c_i = alpha*`` for every ``k``:
HIM reduces to the scalar optimum (tests/m2le/test_merging.py checks both forms).

**Choices the spec leaves open.**
- ``m`` and ``alpha`` are kept in ``[0, m_max]`` with ``m_max = 1``, P&M's convex combination
  (``0 <= alpha_t <= 1``) taken element by element. The objective separates over elements and each
  is a convex quadratic in ``m_k``, so clipping (E2) gives the exact minimum of ``J`` over the box.
  In the ``merged`` variant (E2) already lies in [0, 1] and the clip is a no-op.
- Where the curvature vanishes (``h_tk + sum h_ik ~ 0``) (E2) is 0/0. We add a damping term
  ``lambda/2 ||u - alpha* Delta||^2`` to J, which pulls ``m_k`` to the scalar optimum there:
  ``m_k = (h_tk + g_k / Delta_k + lambda alpha*) / (h_tk + sum h_ik + lambda)``;
  ``lambda = damping * mean(h_t + sum h_i)`` (relative, so it is scale free). ``damping = 0`` gives
  (E2) exactly. Where ``Delta_k = 0`` the merged element is 0 whatever ``m_k``; we report ``alpha*``.
- The modulation acts on the LoRA product ``Delta W = B A`` (the dense weight update, elementwise),
  not on the factors: the curvature is that of the dense weight, and ``m ⊙ (B A)`` is not a
  product of modulated factors. The optima are kept as dense weights for the same reason.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = [
    "joint_quadratic",
    "joint_minimiser",
    "scalar_optimum",
    "elementwise_modulation",
    "pm_alpha",
    "spread",
    "OptimaMemory",
]


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
    """P&M's optimal scalar (Eq. S1) for ``theta_prev + alpha * Delta``, ``Delta = optima[-1] - theta_prev``.

    Unconstrained; ``pm_alpha`` is the same optimum kept in P&M's [0, 1].
    """
    theta_prev = torch.as_tensor(theta_prev, dtype=torch.float64)
    h, d = _stack(curvatures), _stack(optima) - theta_prev
    delta = d[-1]
    den = float((h * delta**2).sum())
    if den <= 0:
        raise ValueError("Delta^T H Delta is zero: the update has no curvature to weigh it")
    return float((h * d * delta).sum()) / den


class OptimaMemory:
    """The earlier tasks' own optima and curvatures of one weight, as the two running sums (E2) needs.

    ``add(h_i, theta_i*)`` after task ``i``; then ``curvature`` is ``sum_i h_i`` and ``pull(theta)`` is
    ``g = sum_i h_i ⊙ (theta_i* - theta)``. Weights may be given relative to any fixed reference (the
    pretrained weight), as long as ``add`` and ``pull`` use the same one. Sums are kept in float64.
    """

    def __init__(self, shape: tuple[int, ...]):
        self.shape = tuple(shape)
        self.h_sum = torch.zeros(self.shape, dtype=torch.float64)
        self.h_theta_sum = torch.zeros(self.shape, dtype=torch.float64)
        self.n_tasks = 0

    def add(self, h: torch.Tensor, optimum: torch.Tensor) -> None:
        if tuple(h.shape) != self.shape or tuple(optimum.shape) != self.shape:
            raise ValueError(
                f"OptimaMemory of shape {self.shape} got curvature {tuple(h.shape)} and optimum {tuple(optimum.shape)}"
            )
        if (h < 0).any():
            raise ValueError("curvatures must be non-negative (a diagonal Fisher is)")
        self.h_sum += h.double()
        self.h_theta_sum += h.double() * optimum.double()
        self.n_tasks += 1

    @property
    def curvature(self) -> torch.Tensor:
        return self.h_sum

    def pull(self, theta: torch.Tensor) -> torch.Tensor:
        """``sum_i h_i ⊙ (theta_i* - theta)`` (0 before any task)."""
        return self.h_theta_sum - self.h_sum * theta.double()


def pm_alpha(
    delta: torch.Tensor,
    h_current: torch.Tensor,
    h_previous: torch.Tensor,
    pull: torch.Tensor | None = None,
    *,
    alpha_max: float = 1.0,
) -> float:
    """P&M's optimal scalar ``(D^T H_t D + D^T g) / D^T (H_t + H_<t) D``, kept in ``[0, alpha_max]``.

    ``pull`` is ``g = sum_{i<t} h_i ⊙ (theta_i* - theta_{t-1})`` (``OptimaMemory.pull``); ``None`` takes
    the previous weights as every earlier task's optimum (``g = 0``, the ``merged`` variant).
    """
    w = delta.double() ** 2
    den = float((w * (h_current + h_previous).double()).sum())
    if den <= 0:
        return 1.0
    num = float((w * h_current.double()).sum())
    if pull is not None:
        num += float((delta.double() * pull.double()).sum())
    return min(max(num / den, 0.0), alpha_max)


def elementwise_modulation(
    h_current: torch.Tensor,
    h_previous: torch.Tensor,
    alpha: float,
    *,
    delta: torch.Tensor | None = None,
    pull: torch.Tensor | None = None,
    damping: float = 1e-3,
    m_max: float = 1.0,
) -> torch.Tensor:
    """HIM's modulation ``m`` (Eq. E2 with damping toward ``alpha``, clipped to ``[0, m_max]``).

    Parameters
    ----------
    h_current, h_previous
        Diagonal curvature of the current task at its trained weights, and the summed curvature
        of the previous tasks (each at its own trained weights).
    alpha
        The scalar optimum the damping pulls to where the curvature vanishes (``pm_alpha``).
    delta, pull
        The current update and the earlier tasks' pull ``g`` (``OptimaMemory.pull``), both or neither;
        neither takes the previous weights as every earlier task's optimum (the ``merged`` variant).
    damping
        ``lambda / mean(h_current + h_previous)``; 0 gives (E2) exactly.
    """
    if damping < 0 or m_max <= 0:
        raise ValueError(f"damping must be >= 0 and m_max > 0; got {damping}, {m_max}")
    if (delta is None) != (pull is None):
        raise ValueError("elementwise_modulation needs delta and pull together (or neither)")
    total = (h_current + h_previous).double()
    lam = damping * float(total.mean())
    den = total + lam
    num = h_current.double() + lam * alpha
    fallback = den <= 0
    if pull is not None:
        d = delta.double()
        fallback = fallback | (d == 0)
        num = num + pull.double() / torch.where(d == 0, torch.ones_like(d), d)
    safe = torch.where(fallback, torch.ones_like(den), den)
    m = torch.where(fallback, torch.full_like(den, float(alpha)), num / safe)
    return m.clamp(0.0, m_max).to(h_current.dtype)


def spread(m: torch.Tensor | np.ndarray) -> float:
    """Standard deviation of the modulation across elements (0 for a scalar merge)."""
    return float(np.std(np.asarray(m, dtype=float)))
