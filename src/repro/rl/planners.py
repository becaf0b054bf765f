"""Sampling-based trajectory optimisers over open-loop action sequences: MPPI, CEM and prior-seeded MPPI.

Every planner maximises a batched objective ``score(actions) -> (E, N)`` over candidate sequences
``actions`` of shape ``(E, N, H, A)`` (E problems at once, N candidates each, horizon H, action
dimension A), with actions boxed in ``[low, high]``. Each returns the improved mean sequence
``(E, H, A)`` and the number of candidate evaluations it spent per problem, the unit in which the
gtp rebuild equalises planning compute.

- :func:`mppi`: model-predictive path integral control (Williams et al. 2017, "Information
  Theoretic MPC for Model-Based Reinforcement Learning", Eq. 27-28): candidates ``mean + sigma * eps``,
  weights ``softmax(J / lambda)``, new mean the weighted average. The temperature is applied to
  standardised scores (``lambda = temperature * std(J)``), so one value serves objectives of any scale.
- :func:`cem`: the cross-entropy method (Rubinstein 1999; as used by PETS, Chua et al. 2018): refit a
  diagonal Gaussian to the top ``elite_frac`` candidates.
- :func:`refine_from_prior`: MPPI whose first population is given (drawn from a generative prior, as in
  Generative Trajectory Planning, D-MPC and GPC) instead of drawn around a warm start; later
  iterations perturb the weighted mean with a shrinking ``sigma``.
- :func:`shift`: the receding-horizon warm start (drop the executed action, repeat a fill value).
- :class:`ActionChunks`: receding-horizon execution in chunks, as Diffusion Policy's authors run their policy
  (Chi et al. 2023, "Diffusion Policy: Visuomotor Policy Learning via Action Diffusion", arXiv 2303.04137,
  "closed-loop action-sequence prediction", and their public code): a sampler predicts a window of ``Tp``
  actions, ``Ta`` of them are executed open loop, then a new window is drawn from the observation reached.
  The planners above replan at every step instead (``Ta = 1``).

All randomness comes from a ``torch.Generator`` argument (ActionChunks draws none itself: its sampler does).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["mppi", "cem", "refine_from_prior", "shift", "mppi_weights", "ActionChunks"]

Score = Callable[[torch.Tensor], torch.Tensor]


def mppi_weights(J: torch.Tensor, temperature: float) -> torch.Tensor:
    """``softmax(J / (temperature * std J))`` over the last axis; (E, N)."""
    if temperature <= 0:
        raise ValueError(f"MPPI temperature must be positive; got {temperature}")
    scale = J.std(-1, keepdim=True).clamp_min(1e-8) * temperature
    return torch.softmax((J - J.max(-1, keepdim=True).values) / scale, -1)


def _check(mean: torch.Tensor, n: int, iterations: int) -> None:
    if mean.ndim != 3:
        raise ValueError(f"planner: the mean sequence must have shape (E, H, A); got {tuple(mean.shape)}")
    if n < 2 or iterations < 1:
        raise ValueError(f"planner: need n_samples >= 2 and iterations >= 1; got {n}, {iterations}")


def mppi(score: Score, mean: torch.Tensor, *, sigma: float, n_samples: int, iterations: int, temperature: float,
         generator: torch.Generator, low: float = -1.0, high: float = 1.0) -> tuple[torch.Tensor, int]:
    """MPPI from ``mean`` (E, H, A): ``iterations`` rounds of ``n_samples`` Gaussian candidates."""
    _check(mean, n_samples, iterations)
    for _ in range(iterations):
        eps = torch.randn((mean.shape[0], n_samples, *mean.shape[1:]), generator=generator)
        cand = (mean[:, None] + sigma * eps).clamp(low, high)  # (E, N, H, A)
        w = mppi_weights(score(cand), temperature)  # (E, N)
        mean = torch.einsum("en,enha->eha", w, cand)
    return mean, n_samples * iterations


def cem(score: Score, mean: torch.Tensor, *, sigma: float, n_samples: int, iterations: int, elite_frac: float,
        generator: torch.Generator, low: float = -1.0, high: float = 1.0, min_std: float = 0.05) -> tuple[torch.Tensor, int]:
    """CEM from ``mean`` (E, H, A) with initial std ``sigma``; the elite count is at least 2."""
    _check(mean, n_samples, iterations)
    if not 0 < elite_frac <= 1:
        raise ValueError(f"CEM elite_frac must lie in (0, 1]; got {elite_frac}")
    k = max(2, int(round(elite_frac * n_samples)))
    std = torch.full_like(mean, sigma)
    for _ in range(iterations):
        eps = torch.randn((mean.shape[0], n_samples, *mean.shape[1:]), generator=generator)
        cand = (mean[:, None] + std[:, None] * eps).clamp(low, high)
        top = score(cand).topk(k, dim=-1).indices  # (E, k)
        elites = torch.gather(cand, 1, top[:, :, None, None].expand(-1, -1, *cand.shape[2:]))
        mean, std = elites.mean(1), elites.std(1).clamp_min(min_std)
    return mean, n_samples * iterations


def refine_from_prior(score: Score, candidates: torch.Tensor, *, sigma: float, iterations: int, temperature: float,
                      generator: torch.Generator, low: float = -1.0, high: float = 1.0,
                      decay: float = 0.5) -> tuple[torch.Tensor, int]:
    """Prior-seeded MPPI: weight the given ``candidates`` (E, N, H, A), then ``iterations - 1`` MPPI
    rounds around the weighted mean with ``sigma * decay**k``. Evaluations: ``N * iterations``."""
    if candidates.ndim != 4:
        raise ValueError(f"refine_from_prior: candidates must have shape (E, N, H, A); got {tuple(candidates.shape)}")
    n = candidates.shape[1]
    mean = torch.einsum("en,enha->eha", mppi_weights(score(candidates), temperature), candidates)
    if iterations > 1:
        for k in range(1, iterations):
            eps = torch.randn(candidates.shape, generator=generator)
            cand = (mean[:, None] + sigma * decay ** (k - 1) * eps).clamp(low, high)
            cand[:, 0] = mean  # keep the current mean in the population (it may already be the best)
            mean = torch.einsum("en,enha->eha", mppi_weights(score(cand), temperature), cand)
    return mean, n * iterations


def shift(plan: torch.Tensor, fill: float = 0.0) -> torch.Tensor:
    """Receding-horizon warm start: drop the first action of ``plan`` (E, H, A), append ``fill``."""
    return torch.cat([plan[:, 1:], torch.full_like(plan[:, :1], fill)], 1)


class ActionChunks:
    """Hand out the actions of predicted windows one step at a time, a new window every ``execute`` steps.

    Diffusion Policy's receding horizon (Chi et al. 2023, "closed-loop action-sequence prediction"; in the
    authors' code ``predict_action`` of the policies and the environments' ``MultiStepWrapper``): from the last
    ``To`` observations the policy predicts ``Tp`` actions, ``action_pred[:, To - 1 : To - 1 + Ta]`` of them are
    executed one per environment step with no new observation read in between, and the policy is queried again
    from the observation reached (their defaults ``Tp = 16``, ``To = 2``, ``Ta = 8``; the window's index 0 is the
    oldest observation's step, so index ``To - 1`` is the current one: the image policies fix the start there, the
    low-dimensional ones through ``oa_step_convention: True`` in the authors' configs, whose class default would
    start one step later, at ``To``). Here the sampler is conditioned on the current observation alone (``To = 1``):
    its window starts at the current step, and the executed chunk is ``window[:, 0:Ta]``, the same actions (the
    current step's and the ``Ta - 1`` after it) that the authors' index ``To - 1`` selects.

    Parameters
    ----------
    sample : ``sample(obs) -> window``: the predicted windows ``(E, Tp, A)`` (a torch tensor or numpy array) of
        ``E`` problems from their observations ``obs``; ``window[:, 0]`` is the action for the step of ``obs``.
    execute : ``Ta``, the actions executed from each window before the next is drawn (``1 <= Ta <= Tp``; 1 draws
        at every step, a closed-loop policy).

    Calling the object with the current observations ``obs`` returns the actions ``(E, A)`` to take now: a new
    window is drawn at the first call (an episode's start) and after ``Ta`` actions of the current one were handed
    out; otherwise ``obs`` is not read. A batch of problems shares one schedule (the authors' vectorised
    environments step their chunks in lockstep too); a problem whose episode ended simply ignores its actions.
    ``reset()`` forgets the window (call it when new episodes start). ``drawn`` counts the windows drawn.
    """

    def __init__(self, sample: Callable[[Any], Any], execute: int):
        if isinstance(execute, bool) or not isinstance(execute, numbers.Integral) or execute < 1:
            raise ValueError(f"ActionChunks: execute (Ta, actions executed per window) must be an integer >= 1; "
                             f"got {execute!r}")
        self.sample, self.execute = sample, int(execute)
        self.drawn = 0
        self.reset()

    def reset(self) -> None:
        """Forget the current window: the next call draws one (an episode's start)."""
        self.window, self.used = None, 0

    def __call__(self, obs: Any) -> Any:
        if self.window is None or self.used == self.execute:
            window = self.sample(obs)
            if window.ndim != 3 or window.shape[1] < self.execute:
                raise ValueError(f"ActionChunks: the sampler must return windows (E, Tp, A) with Tp >= execute = "
                                 f"{self.execute}; got shape {tuple(window.shape)}")
            self.window, self.used = window, 0
            self.drawn += 1
        action = self.window[:, self.used]  # (E, A)
        self.used += 1
        return action
