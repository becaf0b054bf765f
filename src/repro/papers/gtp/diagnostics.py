"""Quality of the learned planning objective on the maze, against its exact targets.

The maze's optimal value is known exactly: from a free lattice point ``T*`` steps from the goal
(breadth-first search, :meth:`repro.papers.gtp.maze.Maze.distances`) the optimal return is
``V*(s) = gamma ** (T* - 1)`` (the reward 1 is earned on the step that enters the goal). These are
diagnostics of the method (the value function against its own target, the reward model against the
reward it was fitted to), never of the planners' score:

- value: Spearman rank correlation of the learned ``V(s)`` with ``V*(s)`` over every free lattice
  point outside the goal, overall and per bucket of optimal distance (a planner needs the ranking,
  not the scale: ``V`` and ``V*`` of a different discount rank the same points alike), with the mean
  of both per bucket;
- direction: the share of those points where the free 8-neighbour (one step of the lattice) of
  largest learned ``V`` (a goal neighbour first) is strictly closer to the goal (``V*``'s greedy step
  always is), per bucket;
- reward: the reward model's mean output on the dataset's goal-entering transitions and on all
  others (target 1 and 0).

Written per seed beside the models (``results/gtp/models/seed<s>.value.json``) and summarised over
seeds in ``reports/gtp_table3``.

The model-free baseline's training (TD3+BC, :func:`repro.rl.td3bc.fit_td3bc`) is summarised per task
in ``reports/gtp_table4`` by :func:`td3bc_table`: the last diagnostics window (critic loss, ``Q`` on the
data's pairs and on the policy's actions, ``lambda``, the BC term) and the relative change of
``Q(s, pi(s))`` and of the BC term over the last quarter of training (near 0: levelled off), the
criterion by which its step count is chosen.

The maze's goal-conditioned diffusion policy (the ``diffusion_policy`` baseline) is checked against its own
training distribution by :func:`goal_policy_diagnostic`: on (start, goal) pairs drawn from the dataset as its
training pairs were (a window's start and a state its episode reached later), its denoising loss with the
pair's goal, with goals permuted across pairs and the goal-agnostic prior's; how far its first action points
towards the goal, by distance, beside the demonstrated action's; and the share of those goals it reaches in
closed loop (entering the goal's cell within ``limit_factor`` times the fewest steps, as the maze's task), per
bucket of fewest steps, beside the goal-agnostic prior's and the dataset's own trajectory's.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import torch

from repro.papers.gtp.experiment import window_starts
from repro.papers.gtp.maze import Maze, move
from repro.rl.diffusion_prior import ActionDiffusion
from repro.rl.hindsight import future_rows
from repro.rl.planners import ActionChunks
from repro.rl.world_model import WorldModel
from repro.seeding import torch_generator
from repro.stats.rank import spearman

__all__ = ["DISTANCE_BUCKETS", "GOAL_BUCKETS", "rank_by_bucket", "greedy_closer", "value_diagnostic",
           "diagnostic_table", "goal_policy_diagnostic"]

#: [lo, hi] optimal steps to the goal (hi None: no upper end)
DISTANCE_BUCKETS = ((1, 4), (5, 14), (15, 29), (30, None))
#: [lo, hi] fewest steps from a start to its goal's cell (the goal policy's diagnostic; 4-12 and 20-28 hold the
#: maze evaluation's near and middle buckets)
GOAL_BUCKETS = ((1, 3), (4, 12), (13, 28), (29, None))
#: [lo, hi) straight-line distance from a start to its goal (maze units), for the first action's direction
REACH_BUCKETS = ((0.0, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (4.0, np.inf))


def rank_by_bucket(value: np.ndarray, optimal: np.ndarray, steps: np.ndarray, greedy_ok: np.ndarray | None = None,
                   buckets=DISTANCE_BUCKETS) -> dict[str, Any]:
    """Rank correlation of ``value`` with ``optimal`` overall and within each bucket of ``steps``
    (and the share of ``greedy_ok``, when given, per bucket)."""
    value, optimal, steps = (np.asarray(a, dtype=float).ravel() for a in (value, optimal, steps))
    if not len(value) == len(optimal) == len(steps):
        raise ValueError("rank_by_bucket: value, optimal and steps need the same length")
    rows = []
    for lo, hi in buckets:
        m = (steps >= lo) & (steps <= (np.inf if hi is None else hi))
        row = {"lo": lo, "hi": hi, "n": int(m.sum()), "spearman": spearman(value[m], optimal[m]),
               "value_mean": float(value[m].mean()) if m.any() else float("nan"),
               "optimal_mean": float(optimal[m].mean()) if m.any() else float("nan")}
        if greedy_ok is not None:
            row["greedy_closer"] = float(np.asarray(greedy_ok)[m].mean()) if m.any() else float("nan")
        rows.append(row)
    out = {"spearman": spearman(value, optimal), "n": len(value), "buckets": rows}
    if greedy_ok is not None:
        out["greedy_closer"] = float(np.mean(greedy_ok))
    return out


def greedy_closer(value_grid: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """For every lattice point with ``dist > 0``: is the free 8-neighbour of largest ``value_grid``
    strictly closer to the goal (``dist`` smaller)? Both (nx, ny); ``dist < 0`` marks blocked points.
    A goal point (``dist == 0``) counts as the best neighbour whatever its value: entering the goal
    earns the reward and ends the episode, and a value is never fitted on the goal's terminal states."""
    nx, ny = dist.shape
    best_v = np.full(dist.shape, -np.inf)
    best_d = np.full(dist.shape, np.iinfo(int).max)
    scored = np.where(dist == 0, np.inf, np.where(dist > 0, value_grid, -np.inf))
    pad_v = np.pad(scored, 1, constant_values=-np.inf)
    pad_d = np.pad(dist, 1, constant_values=-1)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di == dj == 0:
                continue
            v = pad_v[1 + di:1 + di + nx, 1 + dj:1 + dj + ny]
            d = pad_d[1 + di:1 + di + nx, 1 + dj:1 + dj + ny]
            better = v > best_v
            best_v, best_d = np.where(better, v, best_v), np.where(better, d, best_d)
    return (best_d < dist)[dist > 0]


@torch.no_grad()
def value_diagnostic(wm: WorldModel, maze: Maze, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """The learned value against ``V*`` on the lattice, and the reward model on the dataset's transitions."""
    gamma = wm.cfg.gamma
    pts, dist = maze.lattice(), maze.distances()
    ok = dist > 0  # free, reachable, outside the goal
    steps = dist[ok]
    grid = wm.value(torch.as_tensor(pts, dtype=torch.float32)).numpy()
    out = {"gamma": gamma, "value": rank_by_bucket(grid[ok], gamma ** (steps - 1.0), steps, greedy_closer(grid, dist))}
    t = {k: torch.as_tensor(data[k], dtype=torch.float32) for k in ("observations", "actions", "next_observations")}
    r = wm.reward(t["observations"], t["actions"], t["next_observations"]).numpy()
    goal = np.asarray(data["rewards"]) > 0.5
    out["reward"] = {"goal_entering": float(r[goal].mean()) if goal.any() else float("nan"),
                     "other": float(r[~goal].mean()), "n_goal_entering": int(goal.sum()), "n_other": int((~goal).sum())}
    return out


def diagnostic_table(diags: dict[int, dict]) -> pd.DataFrame:
    """Mean and s.e. over seeds of each rank correlation, bucket mean and reward output (one row per quantity)."""
    per_seed = []
    for seed, d in sorted(diags.items()):
        row = {"seed": seed, "spearman_all": d["value"]["spearman"], "greedy_closer_all": d["value"]["greedy_closer"],
               "reward_goal_entering": d["reward"]["goal_entering"],
               "reward_other": d["reward"]["other"]}
        for b in d["value"]["buckets"]:
            key = f"{b['lo']}-{b['hi'] if b['hi'] is not None else 'max'}"
            row.update({f"spearman_{key}": b["spearman"], f"greedy_closer_{key}": b["greedy_closer"],
                        f"value_mean_{key}": b["value_mean"],
                        f"optimal_mean_{key}": b["optimal_mean"]})
        per_seed.append(row)
    frame = pd.DataFrame(per_seed).set_index("seed").astype(float)  # a bucket without points is null in JSON
    return pd.DataFrame({"quantity": frame.columns, "mean": frame.mean().values,
                         "se": (frame.std(ddof=1) / np.sqrt(frame.count())).values if len(frame) > 1 else np.nan,
                         "seeds": frame.count().values})


def late_change(history: list[dict], key: str, frac: float = 0.25) -> float:
    """Relative change of ``key`` over the last ``frac`` of training: ``(x_end - x_then) / |x_end|``
    (``x_then`` is the diagnostics row nearest to step ``(1 - frac) * steps``)."""
    steps = np.array([h["step"] for h in history], dtype=float)
    x = np.array([h[key] for h in history], dtype=float)
    then = x[int(np.argmin(np.abs(steps - (1 - frac) * steps[-1])))]
    return float((x[-1] - then) / max(abs(x[-1]), 1e-12))


def td3bc_table(diags: list[dict]) -> pd.DataFrame:
    """Mean and s.e. over seeds, per task, of TD3+BC's last diagnostics window and its late changes."""
    rows = []
    for d in diags:
        last = d["history"][-1]
        rows.append({"task": d["task"], "seed": d["seed"], "steps": last["step"],
                     **{k: last[k] for k in ("critic_loss", "q_data", "q_pi", "lambda", "bc")},
                     "q_pi_change_last_quarter": late_change(d["history"], "q_pi"),
                     "bc_change_last_quarter": late_change(d["history"], "bc")})
    frame = pd.DataFrame(rows)
    out = []
    for task, g in frame.groupby("task", sort=False):
        for col in frame.columns.drop(["task", "seed"]):
            v = g[col].astype(float)
            out.append({"task": task, "quantity": col, "mean": v.mean(),
                        "se": v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan, "seeds": len(v)})
    return pd.DataFrame(out)


def _by_bucket(x: np.ndarray, key: np.ndarray, buckets, closed: bool) -> list[dict]:
    rows = []
    for lo, hi in buckets:
        hi_ = np.inf if hi is None else hi
        m = (key >= lo) & ((key <= hi_) if closed else (key < hi_))
        rows.append({"lo": lo, "hi": None if hi_ == np.inf else hi, "n": int(m.sum()),
                     "mean": float(x[m].mean()) if m.any() else float("nan")})
    return rows


@torch.no_grad()
def goal_policy_diagnostic(policy: ActionDiffusion, prior: ActionDiffusion, maze: Maze, data: dict[str, np.ndarray],
                           horizon: int, seed: int, *, pairs: int = 600, limit_factor: float = 2.0,
                           execute: int = 1, loss_repeats: int = 8) -> dict[str, Any]:
    """The goal-conditioned diffusion policy on hindsight (start, goal) pairs of its own dataset (module docstring).

    ``execute``: actions carried out from each sampled sequence before the next is drawn
    (:class:`repro.rl.planners.ActionChunks`, as the baseline executes ``plan.policy_execute``; Diffusion Policy's
    authors execute 8 of 16). Closed-loop success counts a pair reached when the goal's
    cell is entered within ``ceil(limit_factor * T*)`` steps from the start's lattice point, ``T*`` the fewest
    steps there (BFS); the dataset's own trajectory counts the steps from the pair's start row to its first
    entry into that cell (at most the goal's row)."""
    if not 1 <= execute <= horizon:
        raise ValueError(f"goal_policy_diagnostic: execute must lie in [1, {horizon}]; got {execute}")
    rng = np.random.default_rng(seed)
    starts = window_starts(data, horizon)
    pick = np.sort(rng.choice(starts, min(pairs, len(starts)), replace=False))
    j = future_rows(data["episode"], pick, rng)
    s, g = data["observations"][pick], data["next_observations"][j]
    x0 = torch.as_tensor(data["actions"][pick[:, None] + np.arange(horizon)].reshape(len(pick), -1), dtype=torch.float32)
    st, gt = torch.as_tensor(s, dtype=torch.float32), torch.as_tensor(g, dtype=torch.float32)
    perm = torch.as_tensor(rng.permutation(len(pick)))

    def loss(model, cond):  # the same noise levels and noise for every condition
        gen = torch_generator(seed)
        return float(np.mean([model.loss(x0, cond, gen).item() for _ in range(loss_repeats)]))

    out: dict[str, Any] = {"pairs": len(pick), "execute": execute, "limit_factor": limit_factor,
                           "loss": {"goal": loss(policy, torch.cat([st, gt], 1)),
                                    "permuted_goal": loss(policy, torch.cat([st, gt[perm]], 1)),
                                    "prior": loss(prior, st)}}
    # the first action's component along the unit direction to the goal (straight line)
    dist = np.linalg.norm(g - s, axis=1)
    unit = (g - s) / np.maximum(dist, 1e-9)[:, None]
    first = {"data": data["actions"][pick],
             "policy": policy.sample(torch.cat([st, gt], 1), 1, torch_generator(seed))[:, 0, :2].numpy(),
             "prior": prior.sample(st, 1, torch_generator(seed))[:, 0, :2].numpy()}
    out["towards_goal"] = {k: _by_bucket((a * unit).sum(1), dist, REACH_BUCKETS, closed=False) for k, a in first.items()}
    # closed loop from the start's lattice point to the goal's cell
    xy0 = np.round(s / maze.step) * maze.step
    cell = np.floor(g / maze.cell + 1e-9).astype(int)
    maps: dict[tuple, np.ndarray] = {}
    t_star = np.empty(len(pick), dtype=int)
    for e, (p, c) in enumerate(zip(xy0, map(tuple, cell))):
        if c not in maps:
            maps[c] = maze.distances(c)
        i = np.round(p / maze.step).astype(int)
        t_star[e] = maps[c][i[0], i[1]] if not maze.blocked(p[None])[0] else -1
    ok = t_star > 0  # a free start outside the goal's cell
    xy0, g, cell, t_star, rows, ends = xy0[ok], g[ok], cell[ok], t_star[ok], pick[ok], j[ok]
    limit = np.ceil(limit_factor * t_star).astype(int)
    boxes = np.stack([maze.cell_box(tuple(c)) for c in cell])
    inside = lambda xy: ((xy >= boxes[:, :2] - 1e-9) & (xy <= boxes[:, 2:] + 1e-9)).all(1)
    own = np.array([np.flatnonzero(maze.in_box(data["next_observations"][r:e + 1], b))[:1].tolist() or [e - r + 1]
                    for r, e, b in zip(rows, ends, boxes)])[:, 0] + 1
    reached = {"data": own <= limit}

    def window(model, cond, gen, xy):  # one sampled window (E, horizon, A) from the states xy
        drawn = model.sample(torch.as_tensor(cond(xy), dtype=torch.float32), 1, gen)[:, 0].numpy()
        return drawn.reshape(len(xy), horizon, -1)

    for name, model, cond in (("policy", policy, lambda xy: np.concatenate([xy, g], 1)), ("prior", prior, lambda xy: xy)):
        xy, done = xy0.copy(), np.zeros(len(xy0), dtype=bool)
        chunks = ActionChunks(partial(window, model, cond, torch_generator(seed)), execute)
        for t in range(int(limit.max(initial=0))):
            live = ~done & (t < limit)
            if not live.any():
                break
            xy = np.where(live[:, None], move(maze, xy, chunks(xy)), xy)
            done |= live & inside(xy)
        reached[name] = done
    out["success"] = {k: {"all": float(v.mean()) if len(v) else float("nan"),
                          "buckets": _by_bucket(v.astype(float), t_star, GOAL_BUCKETS, closed=True)}
                      for k, v in reached.items()}
    out["closed_loop_pairs"] = int(ok.sum())
    return out
