"""The vectorised controlled-Markov-chain simulator against a plain per-chain loop fed the same
uniforms, and against the kernel in distribution."""

import numpy as np
import pytest

from repro.papers.cmcboot.synth import riverswim
from repro.rl.simulate import MarkovPolicy, StickyDriftPolicy, TimeMarkovPolicy, simulate_counts, simulate_trajectories


def inverse_cdf(p, u):
    """Plain-Python inverse CDF: the first k with u < F(k) (the last state if rounding leaves none)."""
    total = 0.0
    for k, pk in enumerate(p[:-1]):
        total += pk
        if u < total:
            return k
    return len(p) - 1


def sticky_probs(policy, t, horizon, prev):
    """StickyDriftPolicy written out for one chain."""
    frac = t / (horizon - 1) if horizon > 1 else 0.0
    p_right = policy.p_start + (policy.p_end - policy.p_start) * frac
    probs = [1 - p_right, p_right]
    if prev >= 0:
        probs = [(1 - policy.stick) * x for x in probs]
        probs[prev] += policy.stick
    return probs


def loop_simulation(P, init, policy, n, horizon, rng):
    """Reference: the simulator's draws (init, then per step actions and next states) consumed in a
    per-chain loop. ``policy`` is ("markov", table) or ("sticky", StickyDriftPolicy)."""
    u0 = rng.random(n)
    states = [[inverse_cdf(init, u0[c])] for c in range(n)]
    actions = [[] for _ in range(n)]
    for t in range(horizon):
        ua, us = rng.random(n), rng.random(n)
        for c in range(n):
            s = states[c][-1]
            if policy[0] == "markov":
                probs = policy[1][s]
            else:
                probs = sticky_probs(policy[1], t, horizon, actions[c][-1] if actions[c] else -1)
            a = inverse_cdf(probs, ua[c])
            actions[c].append(a)
            states[c].append(inverse_cdf(P[s, a], us[c]))
    return np.array(states), np.array(actions)


@pytest.mark.parametrize("kind", ["markov", "sticky"])
def test_vectorised_equals_loop_with_same_draws(kind):
    m = riverswim()
    n, horizon = 40, 60
    if kind == "markov":
        table = np.random.default_rng(3).dirichlet([1, 1], size=6)
        vec_policy, ref_policy = MarkovPolicy(table), ("markov", table)
    else:
        sticky = StickyDriftPolicy(stick=0.4, p_start=0.1, p_end=0.9)
        vec_policy, ref_policy = sticky, ("sticky", sticky)
    states, actions = simulate_trajectories(m.P, vec_policy, m.init, n_chains=n, horizon=horizon,
                                            rng=np.random.default_rng(11))
    ref_states, ref_actions = loop_simulation(m.P, m.init, ref_policy, n, horizon, np.random.default_rng(11))
    np.testing.assert_array_equal(states, ref_states)
    np.testing.assert_array_equal(actions, ref_actions)
    # the count simulator consumes the same draws: its counts are those of the trajectories
    counts = simulate_counts(m.P, vec_policy, m.init, n_chains=n, n_episodes=1, horizon=horizon,
                             rng=np.random.default_rng(11))
    ref_counts = np.zeros((n, 6, 2, 6), dtype=int)
    for c in range(n):
        np.add.at(ref_counts[c], (ref_states[c, :-1], ref_actions[c], ref_states[c, 1:]), 1)
    np.testing.assert_array_equal(counts, ref_counts)


def test_episodes_are_chains_in_group_order():
    """n_chains x n_episodes episodes run as n_chains * n_episodes chains (episode e of data set c is
    chain c * n_episodes + e); per-episode counts, their sum, starts and per-step counts agree."""
    m = riverswim()
    pol = StickyDriftPolicy()
    C, E, H = 5, 7, 12
    states, actions = simulate_trajectories(m.P, pol, m.init, n_chains=C * E, horizon=H, rng=np.random.default_rng(5))
    per_ep, starts, steps = simulate_counts(m.P, pol, m.init, n_chains=C, n_episodes=E, horizon=H,
                                            rng=np.random.default_rng(5), per_episode=True, return_starts=True,
                                            return_step_counts=True)
    summed = simulate_counts(m.P, pol, m.init, n_chains=C, n_episodes=E, horizon=H, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(per_ep.sum(1), summed)
    for c in range(C):
        for e in range(E):
            i = c * E + e
            ref = np.zeros((6, 2, 6), dtype=int)
            np.add.at(ref, (states[i, :-1], actions[i], states[i, 1:]), 1)
            np.testing.assert_array_equal(per_ep[c, e], ref)
        np.testing.assert_array_equal(starts[c], np.bincount(states[c * E:(c + 1) * E, 0], minlength=6))
        for t in range(H):
            ref_t = np.zeros((6, 2), dtype=int)
            np.add.at(ref_t, (states[c * E:(c + 1) * E, t], actions[c * E:(c + 1) * E, t]), 1)
            np.testing.assert_array_equal(steps[c, t], ref_t)


def test_per_chain_kernels_and_time_policy():
    """Chains with their own kernels and a per-step policy table: deterministic kernels and policies
    give trajectories known in advance."""
    S = 3
    P = np.zeros((2, S, 2, S))
    P[0, :, :, 1] = 1.0          # chain group 0 always moves to state 1
    P[1, :, 0, 2] = 1.0          # group 1: action 0 -> state 2, action 1 -> state 0
    P[1, :, 1, 0] = 1.0
    table = np.zeros((1, 4, S, 2))
    table[0, ::2, :, 0] = 1.0    # even steps: action 0; odd steps: action 1
    table[0, 1::2, :, 1] = 1.0
    pol = TimeMarkovPolicy(table, owner=np.array([0, 0]))
    states, actions = simulate_trajectories(P, pol, np.array([1.0, 0, 0]), n_chains=2, horizon=4,
                                            rng=np.random.default_rng(0))
    assert actions.tolist() == [[0, 1, 0, 1]] * 2
    assert states.tolist() == [[0, 1, 1, 1, 1], [0, 2, 0, 2, 0]]


def test_transition_frequencies_match_the_kernel():
    """In distribution: with 200 chains x 500 steps, each RIGHT row is visited >= ~2,000 times, so an
    empirical transition probability has standard error <= sqrt(0.25 / 2000) ~ 0.011; 5 SE = 0.056."""
    m = riverswim()
    counts = simulate_counts(m.P, MarkovPolicy(np.full((6, 2), 0.5)), m.init, n_chains=200, n_episodes=1,
                             horizon=500, rng=np.random.default_rng(2)).sum(0)
    n_sa = counts.sum(-1)
    for s in range(3):  # states the uniform policy visits often
        for a in range(2):
            se = np.sqrt(m.P[s, a] * (1 - m.P[s, a]) / n_sa[s, a])
            assert np.all(np.abs(counts[s, a] / n_sa[s, a] - m.P[s, a]) <= 5 * se + 1e-12)


def test_simulator_rejects_bad_shapes():
    m = riverswim()
    pol = MarkovPolicy(np.full((6, 2), 0.5))
    with pytest.raises(ValueError, match="kernels"):
        simulate_counts(np.stack([m.P] * 3), pol, m.init, n_chains=2, n_episodes=1, horizon=3,
                        rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_chains"):
        simulate_counts(m.P, pol, m.init, n_chains=0, n_episodes=1, horizon=3, rng=np.random.default_rng(0))
