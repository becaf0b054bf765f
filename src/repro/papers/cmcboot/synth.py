"""RiverSwim (Strehl and Littman 2008), the benchmark of "Model-based Bootstrap of Controlled Markov
Chains" (arXiv 2605.12410), with every parameter configurable: cmcboot's ground-truth generator
(the chain is known, so every interval can be checked against the true kernel and values).

The variant built by default (the common one; the paper's own parameters are not known):

- ``n_states = 6`` states ``s0 .. s5`` in a row, two actions LEFT (0) and RIGHT (1);
- LEFT moves ``s -> s-1`` deterministically and stays at ``s0``;
- RIGHT in an interior state: ``p_right = 0.3`` to ``s+1``, ``p_stay = 0.6`` stay, ``p_back = 0.1`` to
  ``s-1``; at ``s0``: ``p_start_stay = 0.7`` stay, ``0.3`` to ``s1``; at ``s5``: ``p_end_stay = 0.3`` stay,
  ``0.7`` to ``s4``;
- rewards of the normalised variant (Osband et al. 2013): ``r_left = 0.005`` (= 5/1000) for LEFT at
  ``s0`` and ``r_right = 1`` for RIGHT at ``s5`` (Strehl and Littman's original: 5 and 10000);
  deterministic and known, only the kernel is estimated;
- each episode (or the single chain) starts uniformly in ``s1`` or ``s2`` (``start_states``);
- discount ``gamma = 0.9``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repro.config import from_dict

__all__ = ["RiverSwimConfig", "riverswim", "FiniteCMC", "LEFT", "RIGHT"]

LEFT, RIGHT = 0, 1


@dataclass(frozen=True)
class RiverSwimConfig:
    """Parameters of RiverSwim (defaults: the common variant, Strehl and Littman 2008)."""

    n_states: int = 6
    p_right: float = 0.3          # RIGHT, interior state: move right
    p_stay: float = 0.6           # RIGHT, interior state: stay
    p_back: float = 0.1           # RIGHT, interior state: pushed back left
    p_start_stay: float = 0.7     # RIGHT at s0: stay (else to s1)
    p_end_stay: float = 0.3       # RIGHT at the last state: stay (else back one state)
    r_left: float = 0.005         # LEFT at s0 (5 / 1000)
    r_right: float = 1.0          # RIGHT at the last state (normalised; 10000 in the original)
    start_states: tuple[int, ...] = (1, 2)
    gamma: float = 0.9

    def __post_init__(self):
        object.__setattr__(self, "start_states", tuple(self.start_states))  # a YAML list is a tuple here
        if self.n_states < 3:
            raise ValueError(f"riverswim.n_states must be >= 3; got {self.n_states}")
        if not np.isclose(self.p_right + self.p_stay + self.p_back, 1.0):
            raise ValueError("riverswim: p_right + p_stay + p_back must equal 1")
        for name in ("p_right", "p_stay", "p_back", "p_start_stay", "p_end_stay"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"riverswim.{name} must lie in [0, 1]")
        if not self.start_states or any(not 0 <= s < self.n_states for s in self.start_states):
            raise ValueError(f"riverswim.start_states must be states in 0..{self.n_states - 1}")
        if not 0.0 <= self.gamma < 1.0:
            raise ValueError(f"riverswim.gamma must lie in [0, 1); got {self.gamma}")


@dataclass(frozen=True)
class FiniteCMC:
    """A finite controlled Markov chain with known rewards: kernel, rewards, initial law, discount."""

    P: np.ndarray = field(repr=False)      # (S, A, S)
    R: np.ndarray = field(repr=False)      # (S, A)
    init: np.ndarray = field(repr=False)   # (S,)
    gamma: float = 0.9
    name: str = "cmc"

    @property
    def n_states(self) -> int:
        return self.P.shape[0]

    @property
    def n_actions(self) -> int:
        return self.P.shape[1]


def riverswim(cfg: RiverSwimConfig | Mapping[str, Any] | None = None, where: str = "riverswim") -> FiniteCMC:
    """Build RiverSwim from ``cfg`` (a :class:`RiverSwimConfig`, a mapping of its fields, or ``None``).

    A mapping goes through :func:`repro.config.from_dict`: an unknown key is a ``ValueError`` naming
    ``<where>.<key>``.
    """
    if not isinstance(cfg, RiverSwimConfig):
        cfg = from_dict(RiverSwimConfig, cfg, where)
    S = cfg.n_states
    P = np.zeros((S, 2, S))
    for s in range(S):
        P[s, LEFT, max(s - 1, 0)] = 1.0
    P[0, RIGHT, 0] = cfg.p_start_stay
    P[0, RIGHT, 1] = 1.0 - cfg.p_start_stay
    for s in range(1, S - 1):
        P[s, RIGHT, s + 1] += cfg.p_right
        P[s, RIGHT, s] += cfg.p_stay
        P[s, RIGHT, s - 1] += cfg.p_back
    P[S - 1, RIGHT, S - 1] = cfg.p_end_stay
    P[S - 1, RIGHT, S - 2] = 1.0 - cfg.p_end_stay
    R = np.zeros((S, 2))
    R[0, LEFT] = cfg.r_left
    R[S - 1, RIGHT] = cfg.r_right
    init = np.zeros(S)
    init[list(cfg.start_states)] = 1.0 / len(cfg.start_states)
    return FiniteCMC(P=P, R=R, init=init, gamma=cfg.gamma, name="riverswim")
