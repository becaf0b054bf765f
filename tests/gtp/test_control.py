"""Classic-control tasks: the datasets follow the tasks' closed-form dynamics and rewards (an
implementation independent of gymnasium's), the scripted controller swings the pendulum up and drives
the car to the goal where random actions do neither, runs are deterministic and paired, the world
model learns the dynamics, TD3+BC acts without a model, and bad names are refused."""

import numpy as np
import pytest
import torch

pytest.importorskip("gymnasium")

from repro.papers.gtp.control import (BehaviourConfig, ControlDataConfig, behaviour_data, collect, evaluate_task,
                                      expert_action, run_episodes)
from repro.papers.gtp.experiment import PlanConfig, sequence_windows, train_td3bc
from repro.rl.world_model import ModelConfig, fit_world_model


@pytest.fixture(scope="module")
def pendulum():
    return collect("pendulum", ControlDataConfig(episodes=12, length=60), seed=0)


@pytest.fixture(scope="module")
def car():
    return collect("mountaincar", ControlDataConfig(episodes=12, length=200), seed=1)


def test_pendulum_transitions_and_costs_follow_the_closed_form(pendulum):
    cos, sin, w = pendulum["observations"].T
    u = 2.0 * pendulum["actions"][:, 0]  # actions are stored in [-1, 1]; torque box [-2, 2]
    theta = np.arctan2(sin, cos)
    w2 = np.clip(w + (15.0 * np.sin(theta) + 3.0 * u) * 0.05, -8, 8)  # g = 10, m = l = 1, dt = 0.05
    theta2 = theta + w2 * 0.05
    nxt = np.stack([np.cos(theta2), np.sin(theta2), w2], 1)
    np.testing.assert_allclose(pendulum["next_observations"], nxt, atol=1e-4)
    cost = theta**2 + 0.1 * w**2 + 0.001 * u**2
    np.testing.assert_allclose(pendulum["rewards"], -cost, atol=1e-4)
    assert not pendulum["terminals"].any()
    assert np.abs(pendulum["actions"]).max() <= 1


def test_mountaincar_transitions_goal_and_termination(car):
    x, v = car["observations"].T
    force = np.clip(car["actions"][:, 0], -1, 1)
    v2 = np.clip(v + 0.0015 * force - 0.0025 * np.cos(3 * x), -0.07, 0.07)
    x2 = np.clip(x + v2, -1.2, 0.6)
    v2 = np.where((x2 == -1.2) & (v2 < 0), 0.0, v2)
    np.testing.assert_allclose(car["next_observations"], np.stack([x2, v2], 1), atol=1e-5)
    goal = (x2 >= 0.45) & (v2 >= 0)
    np.testing.assert_array_equal(car["terminals"].astype(bool), goal)
    np.testing.assert_allclose(car["rewards"], 100.0 * goal - 0.1 * force**2, atol=1e-5)
    # a terminal transition is the last of its episode
    last = np.r_[car["episode"][1:] != car["episode"][:-1], True]
    assert not (goal & ~last).any() and goal.any()


def test_windows_stay_within_episodes(pendulum):
    x0, cond = sequence_windows(pendulum, 6)
    assert x0.shape == (12 * (60 - 6 + 1), 6) and cond.shape[1] == 3


@pytest.mark.parametrize("task,floor", [("pendulum", -400.0), ("mountaincar", 50.0)])
def test_the_scripted_controller_solves_the_task_and_random_does_not(task, floor):
    kw = dict(wm=None, prior=None, plan=PlanConfig(), seed=0)
    expert = run_episodes("expert", task, [3, 4, 5, 6], 200, **kw)["ret"]
    rand = run_episodes("random", task, [3, 4, 5, 6], 200, **kw)["ret"]
    assert expert.mean() > floor > rand.mean()


def test_runs_are_deterministic_and_start_from_the_reset_seeds():
    kw = dict(wm=None, prior=None, plan=PlanConfig(), seed=7)
    a = run_episodes("random", "pendulum", [1, 2], 30, **kw)
    b = run_episodes("random", "pendulum", [1, 2], 30, **kw)
    np.testing.assert_array_equal(a["ret"], b["ret"])
    c = run_episodes("random", "pendulum", [2, 1], 30, **{**kw, "seed": 7})
    assert not np.array_equal(a["ret"], c["ret"])  # the reset seed sets the start


def test_world_model_learns_pendulum_dynamics(pendulum):
    t = {k: torch.as_tensor(v, dtype=torch.float32) for k, v in pendulum.items() if k != "episode"}
    wm = fit_world_model(t["observations"], t["actions"], t["rewards"], t["next_observations"], t["terminals"],
                         ModelConfig(members=2, hidden=64, steps=400, binary_reward=False, gamma=0.9), seed=0)
    with torch.no_grad():
        pred = wm.next_state(t["observations"], t["actions"])
        r = wm.reward(t["observations"], t["actions"], t["next_observations"])
    delta = t["next_observations"] - t["observations"]
    err = ((pred - t["next_observations"]) ** 2).sum(1).mean()
    floor = ((delta - delta.mean(0)) ** 2).sum(1).mean()  # predicting the mean change
    assert err < 0.1 * floor
    assert ((r - t["rewards"]) ** 2).mean() < 0.1 * t["rewards"].var()


def test_td3bc_acts_by_its_actor_alone(pendulum):
    policy, _, history = train_td3bc(pendulum, {"steps": 40, "hidden": 32, "log_every": 20, "gamma": 0.95}, seed=0)
    assert [h["step"] for h in history] == [20, 40]
    kw = dict(wm=None, prior=None, plan=PlanConfig(), seed=0, policy=policy)
    a = run_episodes("td3bc", "pendulum", [1, 2], 30, **kw)
    assert a["evals_per_decision"] == 0 and a["denoiser_per_decision"] == 0  # no model, no planning
    np.testing.assert_array_equal(a["ret"], run_episodes("td3bc", "pendulum", [1, 2], 30, **{**kw, "seed": 9})["ret"])


@pytest.mark.parametrize("call,match", [
    (lambda: collect("acrobot", ControlDataConfig(episodes=1, length=2), 0), "unknown task 'acrobot'"),
    (lambda: run_episodes("sac", "pendulum", [0], 2, wm=None, prior=None, plan=PlanConfig(), seed=0),
     "unknown method 'sac'"),
    (lambda: collect("pendulum", ControlDataConfig(episodes=1, length=2, random_frac=1.5), 0), "random_frac"),
    (lambda: run_episodes("td3bc", "pendulum", [0], 2, wm=None, prior=None, plan=PlanConfig(), seed=0),
     "needs its trained policy"),
    (lambda: train_td3bc({}, {"stepz": 1}, 0),
     "gtp.td3bc.stepz"),
    (lambda: collect("hopper", ControlDataConfig(episodes=1, length=2), 0), "no scripted behaviour"),
    (lambda: expert_action("halfcheetah", np.zeros((1, 17))), "no scripted controller"),
    (lambda: evaluate_task(None, None, "hopper", {"episodes": 1, "length": 2, "methods": ["expert"]}, 0, 0),
     "needs the behaviour agent"),
])
def test_bad_names_and_values_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_mujoco_behaviour_data_and_its_expert():
    """A MuJoCo task's dataset is its TD3 agent's replay buffer (6-D actions for HalfCheetah), and ``expert``
    acts by that agent's actor alone, in a 6-D action box."""
    pytest.importorskip("mujoco")
    cfg = BehaviourConfig(env_steps=120, start_steps=60, length=50, hidden=16)
    data, agent, history = behaviour_data("halfcheetah", cfg, seed=0)
    assert data["observations"].shape == (120, 17) and data["actions"].shape == (120, 6)
    assert np.abs(data["actions"]).max() <= 1 and not data["terminals"].any()  # HalfCheetah never terminates
    assert [h["length"] for h in history] == [50, 50, 20]
    out = run_episodes("expert", "halfcheetah", [5, 6], 8, wm=None, prior=None, plan=PlanConfig(), seed=0,
                       expert=agent.act, record=True)
    t = out["transitions"]
    assert t["actions"].shape == (16, 6)
    np.testing.assert_allclose(t["actions"], agent.act(t["observations"]), atol=1e-6)
    again = run_episodes("expert", "halfcheetah", [5, 6], 8, wm=None, prior=None, plan=PlanConfig(), seed=0,
                         expert=agent.act)
    np.testing.assert_array_equal(out["ret"], again["ret"])
