"""A finite controlled Markov chain simulator, vectorised over many chains at once.

One Python loop runs over time steps; every step advances all chains (and all episodes of all
chains) together with numpy. Chains may share one kernel or each use its own (bootstrap kernels):
``P`` of shape ``(S, A, S)`` or ``(G, S, A, S)`` with one kernel per chain group ``g``.

Random draws, per time step and in this order: one uniform per running chain for the action, then
one per running chain for the next state (initial states use one uniform per chain before the first
step). Categorical draws invert the cumulative distribution. A plain per-chain loop fed the same
uniforms gives the same trajectories (tests/cmcboot/test_simulate.py checks it).

Behaviour policies implement :class:`Policy`: ``initial_memory`` / ``action_probs`` / ``update``.
The memory lets a policy depend on the history (here the previous action); ``t`` (the step within
the episode, or within the chain for a single long chain) makes it nonstationary.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

__all__ = ["Policy", "MarkovPolicy", "TimeMarkovPolicy", "StickyDriftPolicy", "sample_categorical", "simulate_trajectories",
           "simulate_counts"]

log = logging.getLogger(__name__)


class Policy(Protocol):
    """Behaviour policy of a controlled Markov chain, evaluated for many chains at once."""

    def initial_memory(self, n: int) -> dict[str, Any]:
        """State of the policy's memory for ``n`` chains before their first step."""

    def action_probs(self, t: int, horizon: int, states: np.ndarray, group: np.ndarray,
                     memory: dict[str, Any]) -> np.ndarray:
        """``(n, A)`` action probabilities at step ``t`` of ``horizon`` for chains in ``states``."""

    def update(self, memory: dict[str, Any], states: np.ndarray, actions: np.ndarray) -> dict[str, Any]:
        """Memory after the chains took ``actions`` in ``states``."""


@dataclass(frozen=True)
class MarkovPolicy:
    """Stationary Markov policy ``pi(a|s)``: a table ``(S, A)``, or ``(G, S, A)`` (one per chain group)."""

    table: np.ndarray

    def initial_memory(self, n: int) -> dict[str, Any]:
        return {}

    def action_probs(self, t, horizon, states, group, memory):
        table = np.asarray(self.table)
        if table.ndim == 2:
            return np.take(table, states, axis=0)
        S = table.shape[1]
        return np.take(table.reshape(-1, table.shape[2]), group * S + states, axis=0)  # flat gather: fast

    def update(self, memory, states, actions):
        return memory


@dataclass(frozen=True)
class TimeMarkovPolicy:
    """Nonstationary Markov policy ``pi_t(a|s)``: a table ``(K, H, S, A)`` indexed by the step ``t``
    within the episode; chain group ``g`` uses table ``owner[g]`` (several bootstrap chains share the
    table estimated from one data set)."""

    table: np.ndarray
    owner: np.ndarray

    def initial_memory(self, n: int) -> dict[str, Any]:
        return {}

    def action_probs(self, t, horizon, states, group, memory):
        K, H, S, A = self.table.shape
        if t >= H:
            raise ValueError(f"TimeMarkovPolicy holds {H} steps; asked for step {t}")
        return np.take(self.table.reshape(-1, A), (self.owner[group] * H + t) * S + states, axis=0)

    def update(self, memory, states, actions):
        return memory


@dataclass(frozen=True)
class StickyDriftPolicy:
    """A nonstationary, history-dependent behaviour policy for two-action chains (LEFT=0, RIGHT=1).

    With probability ``stick`` the previous action is repeated (history dependence); otherwise RIGHT
    is chosen with probability ``p_start + (p_end - p_start) t / (horizon - 1)`` (drifts over the
    episode, or over a single chain: nonstationarity). The first action uses the drifting part only.
    """

    stick: float = 0.5
    p_start: float = 0.2
    p_end: float = 0.8

    def __post_init__(self):
        for name in ("stick", "p_start", "p_end"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"StickyDriftPolicy.{name} must lie in [0, 1]; got {value}")

    def initial_memory(self, n: int) -> dict[str, Any]:
        return {"prev": np.full(n, -1, dtype=np.int64)}

    def action_probs(self, t, horizon, states, group, memory):
        frac = t / (horizon - 1) if horizon > 1 else 0.0
        p_right = self.p_start + (self.p_end - self.p_start) * frac
        probs = np.empty((len(states), 2))
        probs[:, 0], probs[:, 1] = 1.0 - p_right, p_right
        prev = memory["prev"]
        has_prev = prev >= 0
        if has_prev.any():
            probs[has_prev] *= 1.0 - self.stick
            probs[has_prev, prev[has_prev]] += self.stick
        return probs

    def update(self, memory, states, actions):
        return {"prev": actions.astype(np.int64)}


def sample_categorical(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index ``k`` with ``F(k-1) <= u < F(k)`` for each row of ``probs`` (inverse-CDF sampling).

    ``k = #{j < K - 1 : F(j) <= u}``: the last CDF value is never compared, so a CDF that rounds
    below one cannot push ``k`` past ``K - 1``.
    """
    if probs.shape[-1] == 2:  # fast path, same result
        return (probs[:, 0] <= u).astype(np.int64)
    cdf = np.cumsum(probs, axis=-1)[:, :-1]
    return (cdf <= u[:, None]).sum(axis=-1)


def _prepare(P: np.ndarray, init: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    P = np.asarray(P, dtype=float)
    if P.ndim == 3:
        P = P[None]
    if P.ndim != 4 or P.shape[-1] != P.shape[1]:
        raise ValueError(f"kernel P must have shape (S, A, S) or (G, S, A, S); got {P.shape}")
    if P.shape[0] not in (1, n_groups):
        raise ValueError(f"kernel P holds {P.shape[0]} kernels for {n_groups} chain groups")
    init = np.asarray(init, dtype=float)
    if init.ndim == 1:
        init = init[None]
    if init.shape[-1] != P.shape[-1] or init.shape[0] not in (1, n_groups):
        raise ValueError(f"initial distribution must have shape (S,) or (G, S); got {init.shape}")
    return P, init


def simulate_trajectories(P: np.ndarray, policy: Policy, init: np.ndarray, *, n_chains: int, horizon: int,
                          rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Simulate ``n_chains`` chains of ``horizon`` steps; return states ``(n, horizon + 1)`` and actions ``(n, horizon)``.

    Intended for tests and small designs: it stores every step. :func:`simulate_counts` keeps only
    transition counts and is what the bootstrap uses.
    """
    P, init = _prepare(P, init, n_chains)
    group = np.arange(n_chains)
    gP = group if P.shape[0] > 1 else np.zeros(n_chains, dtype=np.int64)
    gI = group if init.shape[0] > 1 else np.zeros(n_chains, dtype=np.int64)
    states = np.empty((n_chains, horizon + 1), dtype=np.int64)
    actions = np.empty((n_chains, horizon), dtype=np.int64)
    states[:, 0] = sample_categorical(init[gI], rng.random(n_chains))
    memory = policy.initial_memory(n_chains)
    for t in range(horizon):
        s = states[:, t]
        a = sample_categorical(policy.action_probs(t, horizon, s, group, memory), rng.random(n_chains))
        states[:, t + 1] = sample_categorical(P[gP, s, a], rng.random(n_chains))
        actions[:, t] = a
        memory = policy.update(memory, s, a)
    return states, actions


def simulate_counts(P: np.ndarray, policy: Policy, init: np.ndarray, *, n_chains: int, n_episodes: int,
                    horizon: int, rng: np.random.Generator, per_episode: bool = False,
                    return_starts: bool = False, return_step_counts: bool = False):
    """Transition counts ``N(s, a, t)`` of ``n_chains`` independent data sets, simulated together.

    Each data set is ``n_episodes`` episodes of ``horizon`` steps (a single long chain is one
    episode); every episode starts afresh from ``init`` and the policy's memory is reset. All
    ``n_chains * n_episodes`` episodes advance together, one loop over the ``horizon`` steps.

    Parameters
    ----------
    P : array (S, A, S) or (n_chains, S, A, S)
        Shared kernel, or one kernel per data set (bootstrap).
    policy : Policy
        Behaviour policy; a table policy may hold one table per data set (``group`` index).
    init : array (S,) or (n_chains, S)
        Initial state distribution of every episode.
    per_episode : bool
        Return counts per episode, ``(n_chains, n_episodes, S, A, S)``, instead of summed. The random
        draws, hence the data, do not depend on it.
    return_starts : bool
        Also return the counts of episode start states, ``(n_chains, S)``.
    return_step_counts : bool
        Also return the state-action counts at each step of the episodes, ``(n_chains, horizon, S, A)``
        (summed over episodes; what a nonstationary policy estimate needs).

    Returns
    -------
    counts : int64 array (n_chains, S, A, S) or (n_chains, n_episodes, S, A, S)
    starts : int64 array (n_chains, S), only with ``return_starts``
    step_counts : int64 array (n_chains, horizon, S, A), only with ``return_step_counts``
    """
    if min(n_chains, n_episodes, horizon) < 1:
        raise ValueError(f"simulate_counts needs n_chains, n_episodes, horizon >= 1; got {n_chains}, {n_episodes}, {horizon}")
    P, init = _prepare(P, init, n_chains)
    S, A = P.shape[1], P.shape[2]
    cells = S * A * S
    n = n_chains * n_episodes
    group = np.repeat(np.arange(n_chains), n_episodes)  # the data set of each running episode
    gP = group if P.shape[0] > 1 else np.zeros(n, dtype=np.int64)
    gI = group if init.shape[0] > 1 else np.zeros(n, dtype=np.int64)
    # CDF columns j < S-1, laid out (S-1, G*S*A): one contiguous gather per column is about twice
    # as fast as gathering (n, S) rows and reducing over the short last axis
    cdf_cols = np.ascontiguousarray(np.cumsum(P, axis=-1)[..., :-1].reshape(-1, S - 1).T)
    row_base = gP * (S * A)
    slot = np.arange(n) if per_episode else group  # where each episode's counts accumulate
    n_slots = n if per_episode else n_chains
    base = slot * cells
    unique_slots = per_episode or n_episodes == 1
    counts = np.zeros(n_slots * cells, dtype=np.int64)
    pending, pending_size = [], 0
    flush_size = max(4 * n_slots * cells, 1 << 20)  # a bincount costs O(len(counts)): amortise it
    s = sample_categorical(init[gI], rng.random(n))
    starts = np.bincount(group * S + s, minlength=n_chains * S).reshape(n_chains, S)
    step_counts = np.zeros((n_chains, horizon, S * A), dtype=np.int64) if return_step_counts else None
    memory = policy.initial_memory(n)
    for t in range(horizon):
        a = sample_categorical(policy.action_probs(t, horizon, s, group, memory), rng.random(n))
        if return_step_counts:
            step_counts[:, t] = np.bincount(group * (S * A) + s * A + a, minlength=n_chains * S * A).reshape(n_chains, -1)
        u = rng.random(n)
        row = row_base + s * A + a
        s_next = np.zeros(n, dtype=np.int64)
        for col in cdf_cols:  # inverse CDF: s' = #{j < S-1 : F(j | s, a) <= u}
            s_next += np.take(col, row) <= u
        idx = base + (s * A + a) * S + s_next
        if unique_slots:  # one transition per slot and step: plain fancy indexing is exact
            counts[idx] += 1
        else:  # several episodes share a slot: buffer the steps, then one bincount per flush
            pending.append(idx)
            pending_size += n
            if pending_size >= flush_size or t == horizon - 1:
                counts += np.bincount(np.concatenate(pending), minlength=counts.size)
                pending, pending_size = [], 0
        memory = policy.update(memory, s, a)
        s = s_next
    shape = (n_chains, n_episodes, S, A, S) if per_episode else (n_chains, S, A, S)
    out = [counts.reshape(shape)]
    if return_starts:
        out.append(starts)
    if return_step_counts:
        out.append(step_counts.reshape(n_chains, horizon, S, A))
    return tuple(out) if len(out) > 1 else out[0]
