"""The shared PPO agent and its advantage estimator (repro.rl.ppo), used by RLQ-Grad."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.rl.ppo import PPOAgent, PPOConfig, gae


def _rollout(seed, T=12):
    gen = torch.Generator().manual_seed(seed)
    rewards = torch.randn(T, generator=gen, dtype=torch.float64)
    values = torch.randn(T, generator=gen, dtype=torch.float64)
    return rewards, values, torch.randn((), generator=gen, dtype=torch.float64)


@pytest.mark.parametrize("gamma,lam", [(0.99, 0.95), (0.9, 0.0), (0.5, 1.0), (0.0, 0.7)])
def test_gae_matches_the_closed_form_sum_of_td_errors(gamma, lam):
    # A_t = sum_l (gamma lam)^l delta_{t+l}, delta_t = r_t + gamma V_{t+1} - V_t, V_T = last value
    # (Schulman et al. 2016, Eq. 16), written as one matrix product; float64, so round-off ~1e-15.
    r, v, last = _rollout(0)
    T = len(r)
    v_next = np.append(v[1:].numpy(), float(last))
    delta = r.numpy() + gamma * v_next - v.numpy()
    weights = np.triu((gamma * lam) ** np.subtract.outer(np.arange(T), np.arange(T)).T.clip(0))
    adv, returns = gae(r, v, last, gamma=gamma, lam=lam)
    np.testing.assert_allclose(adv, weights @ delta, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(returns, adv + v, rtol=0, atol=0)


def test_gae_with_lambda_one_is_the_bootstrapped_discounted_return_minus_the_value():
    r, v, last = _rollout(1)
    gamma, T = 0.9, len(r)
    ret = [sum(gamma**k * float(r[t + k]) for k in range(T - t)) + gamma ** (T - t) * float(last) for t in range(T)]
    _, returns = gae(r, v, last, gamma=gamma, lam=1.0)
    np.testing.assert_allclose(returns, ret, rtol=1e-12)


def test_gae_stops_at_episode_ends():
    # a terminal after step 4 splits the rollout into two episodes: the first one is estimated as
    # if it ended with a zero-valued state, the second one as a rollout of its own
    r, v, last = _rollout(2, T=10)
    done = torch.zeros(10)
    done[4] = 1
    adv, _ = gae(r, v, last, gamma=0.95, lam=0.9, terminated=done)
    first, _ = gae(r[:5], v[:5], 0.0, gamma=0.95, lam=0.9)
    second, _ = gae(r[5:], v[5:], last, gamma=0.95, lam=0.9)
    np.testing.assert_allclose(adv, torch.cat([first, second]), rtol=1e-12)


@pytest.mark.parametrize("spectral_norm", [True, False])
def test_ppo_learns_a_planted_bandit(spectral_norm):
    # One constant state; reward -|g - g*|^2. PPO must move the policy mean towards g*.
    cfg = PPOConfig(lr=3e-3, minibatches=1, ppo_epochs=8, gamma=0.0, gae_lambda=0.0)
    agent = PPOAgent(4, 2, cfg, hidden=16, spectral_norm=spectral_norm, seed=3)
    s = torch.ones(4)
    target = torch.tensor([0.8, -0.6])
    start = float((agent.actor(s[None])[0] - target).norm().detach())
    for _ in range(40):
        batch = [agent.act(s) for _ in range(32)]
        actions = torch.stack([b[0] for b in batch])
        rewards = -(actions - target).pow(2).sum(dim=1)
        agent.learn(s.repeat(32, 1), actions, torch.stack([b[1] for b in batch]), torch.stack([b[2] for b in batch]),
                    rewards, torch.tensor(0.0))
    end = float((agent.actor(s[None])[0] - target).norm().detach())
    assert end < 0.5 * start


def test_agent_is_a_function_of_its_seed_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    a, b = (PPOAgent(6, 3, spectral_norm=True, seed=11) for _ in range(2))
    assert torch.equal(torch.random.get_rng_state(), state)
    s = torch.linspace(-1, 1, 6)
    for x, y in zip(a.act(s), b.act(s)):
        assert torch.equal(x, y)
    assert torch.equal(torch.random.get_rng_state(), state)
