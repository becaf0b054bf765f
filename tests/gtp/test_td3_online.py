"""Online TD3 (repro.rl.td3bc.fit_td3_online), the behaviour agent of gtp's MuJoCo datasets: on a
contextual bandit with a planted optimal action it learns that action from its own interaction; its
replay buffer is exactly what happened (contiguous episodes, terminals only where the environment
ended an episode, uniform actions before ``start_steps`` whatever the network); runs are
deterministic; impossible settings are refused by name."""

import numpy as np
import pytest
import torch

gym = pytest.importorskip("gymnasium")

from repro.rl.td3bc import TD3BCConfig, fit_td3_online  # noqa: E402 - after the gymnasium skip


class Bandit(gym.Env):
    """s ~ U(-1, 1); reward 1 - (a - 0.5 s)^2 (the optimal action a*(s) = 0.5 s); every step ends the episode."""

    def __init__(self):
        self.observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
        self.action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.s = self.np_random.uniform(-1, 1, 1).astype(np.float32)
        return self.s, {}

    def step(self, a):
        r = 1.0 - float((a[0] - 0.5 * self.s[0]) ** 2)
        return self.s, r, True, False, {}


class Walk(gym.Env):
    """A 1-D walk x' = x + 0.1 a that ends (terminal) when |x| > 1: long episodes that are cut by ``length``."""

    def __init__(self):
        self.observation_space = gym.spaces.Box(-2, 2, (1,), np.float32)
        self.action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = np.zeros(1, np.float32)
        return self.x.copy(), {}

    def step(self, a):
        self.x = (self.x + 0.1 * np.asarray(a, np.float32)).astype(np.float32)
        return self.x.copy(), float(-abs(self.x[0])), bool(abs(self.x[0]) > 1), False, {}


CFG = TD3BCConfig(hidden=64, gamma=0.5, batch=64, normalize=False)


def test_learns_the_planted_optimal_action():
    policy, _, data, history = fit_td3_online(Bandit(), CFG, 0, env_steps=1500, start_steps=200, length=1)
    s = np.linspace(-0.9, 0.9, 19)[:, None]
    err = np.abs(policy.act(s)[:, 0] - 0.5 * s[:, 0])
    assert err.max() < 0.15, err  # the floor: a random actor is off by ~0.5 on average
    late = np.mean([h["return"] for h in history[-200:]])
    early = np.mean([h["return"] for h in history[:200]])  # uniform actions: E = 1 - (1/3 + s^2/4) ~ 0.58
    assert early < 0.7 < 0.9 < late


def test_the_buffer_is_what_happened():
    env = Walk()
    policy, _, data, history = fit_td3_online(env, CFG, 1, env_steps=400, start_steps=150, length=30)
    obs, nxt, ep, term = data["observations"][:, 0], data["next_observations"][:, 0], data["episode"], data["terminals"]
    assert all(len(v) == 400 for v in data.values())
    np.testing.assert_allclose(nxt, obs + 0.1 * data["actions"][:, 0], atol=1e-6)  # the environment's own step
    same = ep[1:] == ep[:-1]
    np.testing.assert_array_equal(obs[1:][same], nxt[:-1][same])  # contiguous within an episode
    assert np.all(obs[1:][~same] == 0)  # a new episode starts from the reset state
    assert np.array_equal(term == 1, np.abs(nxt) > 1)  # terminal where the walk left the box, nowhere else
    lengths = np.bincount(ep)
    assert lengths.max() <= 30 and sum(h["length"] for h in history) == 400
    assert np.array_equal(np.diff(np.unique(ep)), np.ones(ep.max(), int))
    # before start_steps the actions are the seed's uniform draws, whatever the network
    _, _, other, _ = fit_td3_online(Walk(), TD3BCConfig(hidden=8, gamma=0.5, batch=64), 1, env_steps=150, start_steps=150,
                                    length=30)
    np.testing.assert_array_equal(other["actions"], data["actions"][:150])


def test_runs_are_deterministic():
    a = fit_td3_online(Walk(), CFG, 3, env_steps=200, start_steps=50, length=40)
    b = fit_td3_online(Walk(), CFG, 3, env_steps=200, start_steps=50, length=40)
    for k in a[2]:
        np.testing.assert_array_equal(a[2][k], b[2][k])
    for p, q in zip(a[0].parameters(), b[0].parameters()):
        assert torch.equal(p, q)


@pytest.mark.parametrize("kw,match", [({"start_steps": 0}, "start_steps"), ({"start_steps": 300}, "start_steps"),
                                      ({"length": 0}, "length"), ({"explore": -0.1}, "explore")])
def test_impossible_settings_are_refused(kw, match):
    args = {"env_steps": 200, "start_steps": 50, "length": 40, **kw}
    with pytest.raises(ValueError, match=match):
        fit_td3_online(Walk(), CFG, 0, **args)
