"""Hindsight goal relabelling: a goal for every training sample from what its own episode later reached.

Goal-conditioned behaviour cloning learns ``pi(a | s, g)`` from data collected without the goal in
mind by calling a state that the trajectory actually reached later its goal: the "future" strategy of
Hindsight Experience Replay (Andrychowicz et al. 2017, Sec. 3.3 and 4.5), used with a uniformly
drawn future step by goal-conditioned supervised learning (Ghosh et al. 2019, GCSL, Algorithm 1) and
by goal-conditioned diffusion policies (Reuss et al. 2023, BESO).

:func:`future_goals`: for a sample starting at row ``i`` of episode ``e``, draw ``j`` uniformly from
the rows ``i, ..., last(e)`` of the same episode and return the state reached after row ``j``
(``achieved[j]``, i.e. ``next_observations[j]``), so the goal is always reachable from the sample's
start by the actions the data took. Rows are in episode order (as the offline datasets here are).
"""

from __future__ import annotations

import numpy as np

__all__ = ["future_rows", "future_goals"]


def future_rows(episode: np.ndarray, starts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The row ``j`` whose achieved state is the goal of each sample starting at rows ``starts``: uniform on the
    rows of the same episode from the start on. ``episode`` (M,) ids, rows of an episode contiguous."""
    episode, starts = np.asarray(episode), np.asarray(starts, dtype=int)
    if len(episode) and len(np.unique(episode)) != 1 + np.count_nonzero(np.diff(episode)):
        raise ValueError("future_goals: the rows of each episode must be contiguous")
    if starts.size and (starts.min() < 0 or starts.max() >= len(episode)):
        raise ValueError(f"future_goals: start rows must lie in [0, {len(episode)})")
    last = np.empty(len(episode), dtype=int)  # last row of each row's episode
    bounds = np.flatnonzero(np.diff(episode) != 0)
    ends = np.append(bounds, len(episode) - 1)
    begins = np.insert(bounds + 1, 0, 0)
    for b, e in zip(begins, ends):
        last[b : e + 1] = e
    return starts + np.floor(rng.random(len(starts)) * (last[starts] - starts + 1)).astype(int)


def future_goals(episode: np.ndarray, achieved: np.ndarray, starts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Goals (len(starts), G) for the samples starting at rows ``starts``: ``achieved[j]`` with ``j`` uniform on
    the rows of the same episode from the start on (:func:`future_rows`). ``episode`` (M,) ids, rows of an
    episode contiguous."""
    if len(episode) != len(achieved):
        raise ValueError(f"future_goals: {len(episode)} episode ids for {len(achieved)} achieved states")
    return np.asarray(achieved)[future_rows(episode, starts, rng)]
