"""The offline maze dataset: goal-agnostic behaviour, relabelled with the task's sparse reward.

As D4RL's ``maze2d`` datasets, the behaviour does not know the task: a share ``random_frac`` of the
episodes are random (temporally correlated uniform actions, "random policies"), the rest follow the
shortest path to random waypoints with Gaussian action noise ("partly trained policies", noise
``noise``); a new waypoint is drawn when one is reached. Rewards and terminals are relabelled for the
task: 1 on entering the goal cell. Transitions that start inside the goal (the task has ended there)
are dropped.

The dataset is written once per seed as an ``.npz`` (the D4RL / Minari field names: observations,
actions, rewards, next_observations, terminals, plus ``episode`` ids) with its sha256 sidecar beside it
(:mod:`repro.data.sidecar`), which every read checks first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repro.data.sidecar import verify, write_sidecar
from repro.io import atomic_path, load_npz
from repro.papers.gtp.maze import Maze, expert_actions, move

__all__ = ["DatasetConfig", "collect", "save_dataset", "load_dataset", "FIELDS"]

FIELDS = ("observations", "actions", "rewards", "next_observations", "terminals", "episode")


@dataclass(frozen=True)
class DatasetConfig:
    episodes: int = 200
    """behaviour episodes"""
    length: int = 100
    """steps per episode"""
    random_frac: float = 0.3
    """share of episodes from the random policy"""
    noise: float = 0.3
    """sd of the Gaussian noise on the waypoint-following actions"""
    persistence: float = 0.8
    """AR(1) coefficient of the random policy's actions"""


def collect(maze: Maze, cfg: DatasetConfig, seed: int) -> dict[str, np.ndarray]:
    """Run the behaviour episodes (vectorised) and return flat transitions."""
    if not 0 <= cfg.random_frac <= 1:
        raise ValueError(f"dataset: random_frac must lie in [0, 1]; got {cfg.random_frac}")
    rng = np.random.default_rng(seed)
    E, L = cfg.episodes, cfg.length
    pts = maze.lattice()
    free = np.argwhere(~maze.blocked(pts) & ~maze.in_goal(pts))
    xy = pts[tuple(free[rng.integers(len(free), size=E)].T)]
    is_random = rng.random(E) < cfg.random_frac
    cells = maze.free_cells()
    dist_maps = {c: maze.distances(c) for c in cells}
    waypoint = [cells[i] for i in rng.integers(len(cells), size=E)]
    a_prev = rng.uniform(-1, 1, size=(E, 2))
    obs, act, nxt = np.empty((L, E, 2)), np.empty((L, E, 2)), np.empty((L, E, 2))
    for t in range(L):
        a = np.empty((E, 2))
        a_rand = np.clip(cfg.persistence * a_prev + np.sqrt(1 - cfg.persistence**2) * rng.uniform(-1, 1, (E, 2)) * 1.5,
                         -1, 1)
        a[is_random] = a_rand[is_random]
        for c in set(waypoint[e] for e in np.flatnonzero(~is_random)):
            group = np.array([e for e in np.flatnonzero(~is_random) if waypoint[e] == c])
            a[group] = expert_actions(maze, xy[group], dist_maps[c])
        a[~is_random] = np.clip(a[~is_random] + cfg.noise * rng.standard_normal(((~is_random).sum(), 2)), -1, 1)
        obs[t], act[t] = xy, a
        xy = move(maze, xy, a)
        nxt[t] = xy
        a_prev = a
        for e in np.flatnonzero(~is_random):  # a reached waypoint is replaced
            if Maze.in_box(xy[e], maze.cell_box(waypoint[e])):
                waypoint[e] = cells[rng.integers(len(cells))]
    episode = np.broadcast_to(np.arange(E), (L, E))
    flat = lambda x: np.swapaxes(x, 0, 1).reshape(E * L, *x.shape[2:])  # episode-major order
    out = {"observations": flat(obs), "actions": flat(act), "next_observations": flat(nxt),
           "episode": flat(episode[..., None])[:, 0]}
    out["rewards"] = maze.in_goal(out["next_observations"]).astype(float)
    out["terminals"] = out["rewards"].copy()
    keep = ~maze.in_goal(out["observations"])
    return {k: np.ascontiguousarray(v[keep]) for k, v in out.items()}


def save_dataset(data: dict[str, np.ndarray], path: str | Path) -> str:
    """Write the ``.npz`` atomically, then its sidecar ``<path>.sha256``; return the digest."""
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **{k: data[k] for k in FIELDS})
    return write_sidecar(path)


def load_dataset(path: str | Path) -> dict[str, np.ndarray]:
    """Read a dataset written by :func:`save_dataset` once it matches its sidecar (a changed file, or one without
    its sidecar, is an error naming it: :func:`repro.data.sidecar.verify`)."""
    path = verify(path)
    z = load_npz(path)  # a damaged archive: a ValueError naming the file
    missing = [k for k in FIELDS if k not in z]
    if missing:
        raise ValueError(f"{path}: missing fields {missing}")
    return {k: z[k] for k in FIELDS}
