"""The value learning and its diagnostic: n-step targets match hand-computed returns; on a corridor with
goal-agnostic random-walk data the fitted n-step expectile value ranks states as the exact optimal value
does; the diagnostic gives its known answers (exact value: rho 1 and every greedy step closer)."""

import numpy as np
import pytest
import torch

from repro.papers.gtp.diagnostics import greedy_closer, rank_by_bucket, value_diagnostic
from repro.papers.gtp.maze import Maze
from repro.rl.world_model import ModelConfig, fit_world_model, n_step_targets, successors


def test_n_step_targets_match_hand_computed_returns():
    # two trajectories: 0 -> 1 -> 2 (2 enters the goal: r 1, terminal), then 3 -> 4 (ends without a goal)
    r = torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0])
    d = r.clone()
    nxt_obs = torch.arange(5.0)[:, None] + 10  # s'_i = 10 + i, to identify the bootstrap state
    succ = torch.tensor([1, 2, -1, 4, -1])
    g = 0.9
    ret, boot, disc = n_step_targets(r, d, nxt_obs, succ, 3, g)
    assert torch.allclose(ret, torch.tensor([g**2, g, 1.0, 0.0, 0.0]))
    assert torch.allclose(disc, torch.tensor([0.0, 0.0, 0.0, g**2, g]))  # 0 where the goal ended the return
    assert boot[:, 0].tolist() == [12, 12, 12, 14, 14]
    ret1, boot1, disc1 = n_step_targets(r, d, nxt_obs, succ, 1, g)  # n = 1 is TD(0)
    assert torch.equal(ret1, r) and torch.equal(boot1, nxt_obs) and torch.allclose(disc1, g * (1 - d))


def test_successors_follow_episodes_and_break_at_gaps():
    obs = torch.tensor([[0.0], [1.0], [2.0], [5.0], [6.0]])
    nxt = torch.tensor([[1.0], [2.0], [3.0], [6.0], [7.0]])
    ep = torch.tensor([0, 0, 0, 0, 1])  # row 3 does not start where row 2 ends; row 4 is another episode
    assert successors(obs, nxt, ep).tolist() == [1, 2, -1, -1, -1]


def corridor(n_cells=30, episodes=200, length=60, seed=0):
    """A 1-D corridor x in {0, ..., n_cells}, goal at n_cells (reward 1 on entering it, terminal);
    goal-agnostic random walk (actions uniform in [-1, 1], moves of round(a) cells)."""
    rng = np.random.default_rng(seed)
    obs, act, nxt, ep = [], [], [], []
    for e in range(episodes):
        x = rng.integers(0, n_cells)
        for _ in range(length):
            a = rng.uniform(-1, 1)
            x2 = int(np.clip(x + np.round(a), 0, n_cells))
            obs.append([x / n_cells]), act.append([a]), nxt.append([x2 / n_cells]), ep.append(e)
            if x2 == n_cells:
                break
            x = x2
    t = {k: torch.tensor(v, dtype=torch.float32) for k, v in
         (("obs", obs), ("act", act), ("nxt", nxt))}
    t["rew"] = (t["nxt"][:, 0] >= 1 - 1e-6).float()
    t["ep"] = torch.tensor(ep)
    return t


def test_n_step_value_ranks_a_corridor_like_the_optimal_value():
    """V*(x) = gamma^(n_cells - x - 1): decreasing with the distance to the goal over all 30 cells
    (past the ~15 steps a TD(0) fit of a few hundred target updates reaches)."""
    t = corridor()
    cfg = ModelConfig(members=1, hidden=64, steps=20, value_steps=4000, n_step=5, gamma=0.97)
    wm = fit_world_model(t["obs"], t["act"], t["rew"], t["nxt"], t["rew"], cfg, seed=0, episode=t["ep"])
    x = torch.arange(30.0)[:, None] / 30
    v = wm.value(x).detach().numpy()
    steps = 30 - np.arange(30)
    out = rank_by_bucket(v, 0.97 ** (steps - 1.0), steps, buckets=((1, 10), (11, 20), (21, 30)))
    assert out["spearman"] > 0.95
    assert all(b["spearman"] > 0.8 for b in out["buckets"])


def test_n_step_value_needs_trajectories():
    t = corridor(episodes=5)
    with pytest.raises(ValueError, match="episode"):
        fit_world_model(t["obs"], t["act"], t["rew"], t["nxt"], t["rew"], ModelConfig(steps=1, n_step=3), seed=0)
    with pytest.raises(ValueError, match="n_step"):
        n_step_targets(t["rew"], t["rew"], t["nxt"], torch.full((len(t["rew"]),), -1), 0, 0.9)


def test_rank_by_bucket_known_answers():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    out = rank_by_bucket(np.array([1.0, 3.0, 2.0, 4.0]), x, np.array([1, 2, 3, 4]), buckets=((1, 2), (1, 4)))
    assert out["spearman"] == pytest.approx(1 - 6 * 2 / (4 * 15))  # 0.8: two ranks swapped
    assert np.isnan(out["buckets"][0]["spearman"])  # two points: undefined
    assert rank_by_bucket(-x, x, x)["spearman"] == pytest.approx(-1.0)


def test_greedy_step_skips_blocked_neighbours():
    dist = np.array([[2, 1, 0],
                     [-1, -1, 1],
                     [4, 3, 2]])  # -1: blocked
    value = -dist.astype(float)
    value[1, 0] = 10.0  # a blocked point with a large value must not be chosen
    ok = greedy_closer(value, dist)
    assert ok.all() and len(ok) == (dist > 0).sum()
    # uphill value: the greedy step moves away wherever it has a choice, except into the goal (0, 2), which
    # (0, 1) and (1, 2) take whatever its value; (0, 0) and (2, 0) have one free neighbour each, closer to the
    # goal; (2, 1) and (2, 2) step away (order: row-major over dist > 0)
    assert greedy_closer(dist.astype(float), dist).tolist() == [True, True, True, True, False, False]


class ExactModel:
    """Stand-in for a world model with the exact optimal value and the exact reward of the maze."""

    def __init__(self, maze: Maze, gamma: float):
        self.maze, self.dist = maze, maze.distances()
        self.cfg = ModelConfig(gamma=gamma)

    def value(self, s):
        idx = np.round(s.numpy() / self.maze.step).astype(int)
        d = self.dist[idx[..., 0], idx[..., 1]]  # points of any leading shape (the lattice is (nx, ny, 2))
        return torch.as_tensor(np.where(d > 0, self.cfg.gamma ** (d - 1.0), 0.0))

    def reward(self, s, a, s2):
        return torch.as_tensor(self.maze.in_goal(s2.numpy()).astype(float))


def test_diagnostic_of_the_exact_value_is_perfect():
    from repro.papers.gtp.data import DatasetConfig, collect

    maze = Maze.named("umaze", step=0.25)
    data = collect(maze, DatasetConfig(episodes=30, length=40), seed=0)
    out = value_diagnostic(ExactModel(maze, 0.95), maze, data)
    assert out["value"]["spearman"] == pytest.approx(1.0)
    assert out["value"]["greedy_closer"] == 1.0
    assert out["reward"]["goal_entering"] == 1.0 and out["reward"]["other"] == 0.0
    assert out["reward"]["n_goal_entering"] == int(data["rewards"].sum()) > 0


def test_diagnostic_table_keeps_a_bucket_without_points_as_nan():
    """A small maze has no point 30+ steps from the goal: its bucket is null in the JSON, NaN in the table."""
    from repro.papers.gtp.diagnostics import diagnostic_table

    def diag(rho):
        buckets = [{"lo": 1, "hi": 4, "spearman": rho, "greedy_closer": 1.0, "value_mean": 0.9, "optimal_mean": 0.95},
                   {"lo": 30, "hi": None, "spearman": None, "greedy_closer": None, "value_mean": None,
                    "optimal_mean": None}]
        return {"value": {"spearman": rho, "greedy_closer": 1.0, "buckets": buckets},
                "reward": {"goal_entering": 0.5, "other": 0.0}}

    table = diagnostic_table({0: diag(0.8), 1: diag(0.9)}).set_index("quantity")
    assert table.loc["spearman_all", "mean"] == pytest.approx(0.85)
    assert table.loc["spearman_all", "se"] == pytest.approx(0.05)  # s.d. 0.0707 over sqrt(2)
    assert np.isnan(table.loc["spearman_30-max", "mean"]) and table.loc["spearman_30-max", "seeds"] == 0
