"""Finite-MDP tools (repro.rl.mdp) and the empirical kernel against closed forms on a 2-state chain."""

import numpy as np
import pytest

from repro.methods.cmc_bootstrap import empirical_kernel, empirical_policy
from repro.rl.mdp import (greedy_policy, policy_evaluation, policy_iteration, q_gradient, value_gradient,
                          value_iteration)


def two_state_chain(p=0.3, q=0.6):
    """Two states, one action: 0 -> 1 w.p. p, 1 -> 0 w.p. q; reward 1 in state 0."""
    P = np.array([[[1 - p, p]], [[q, 1 - q]]])  # (S=2, A=1, S=2)
    R = np.array([[1.0], [0.0]])
    return P, R


def test_empirical_kernel_is_count_ratio_and_fills_unvisited_rows():
    counts = np.zeros((2, 2, 2))
    counts[0, 0] = [3, 1]
    counts[1, 0] = [0, 5]
    P_hat, visited = empirical_kernel(counts)
    np.testing.assert_allclose(P_hat[0, 0], [0.75, 0.25])
    np.testing.assert_allclose(P_hat[1, 0], [0.0, 1.0])
    assert visited.tolist() == [[True, False], [True, False]]
    np.testing.assert_allclose(P_hat[0, 1], [0.5, 0.5])  # uniform fill
    np.testing.assert_allclose(empirical_kernel(counts, fill="self")[0][1, 1], [0.0, 1.0])
    np.testing.assert_allclose(empirical_policy(counts), [[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="unvisited_fill"):
        empirical_kernel(counts, fill="prior")


def test_policy_evaluation_matches_two_state_closed_form():
    p, q, gamma = 0.3, 0.6, 0.9
    P, R = two_state_chain(p, q)
    V, Q = policy_evaluation(P, R, np.ones((2, 1)), gamma)
    # (I - gamma P) V = r with r = (1, 0): Cramer's rule on the 2x2 system
    det = (1 - gamma * (1 - p)) * (1 - gamma * (1 - q)) - gamma**2 * p * q
    V0 = (1 - gamma * (1 - q)) / det
    V1 = gamma * q / det
    np.testing.assert_allclose(V, [V0, V1], rtol=1e-12)
    np.testing.assert_allclose(Q[:, 0], V, rtol=1e-12)


def test_policy_evaluation_is_batched():
    P, R = two_state_chain()
    P2, _ = two_state_chain(0.5, 0.2)
    V_batch, _ = policy_evaluation(np.stack([P, P2]), R, np.ones((2, 1)), 0.8)
    np.testing.assert_allclose(V_batch[1], policy_evaluation(P2, R, np.ones((2, 1)), 0.8)[0])


def random_mdp(rng, S=4, A=3):
    P = rng.dirichlet(np.ones(S), size=(S, A))
    R = rng.random((S, A))
    return P, R


def test_value_iteration_and_policy_iteration_agree():
    rng = np.random.default_rng(0)
    P, R = random_mdp(rng)
    V_vi, Q_vi, _ = value_iteration(P, R, 0.9, tol=1e-11)
    V_pi, Q_pi, pi = policy_iteration(P, R, 0.9)
    np.testing.assert_allclose(V_vi, V_pi, atol=1e-9)
    np.testing.assert_allclose(Q_vi, Q_pi, atol=1e-9)
    np.testing.assert_array_equal(pi, greedy_policy(Q_pi))
    # optimality: no single-state deviation improves
    np.testing.assert_allclose(V_pi, Q_pi.max(-1), atol=1e-12)


def test_value_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    P, R = random_mdp(rng)
    pi = rng.dirichlet(np.ones(3), size=4)
    gamma, eps = 0.85, 1e-6
    V, _ = policy_evaluation(P, R, pi, gamma)
    G = value_gradient(P, pi, V, gamma)
    GQ = q_gradient(P, pi, V, gamma)
    # directional derivative along a perturbation that keeps every row a distribution
    D = rng.normal(size=P.shape)
    D -= D.mean(-1, keepdims=True)
    V_eps, Q_eps = policy_evaluation(P + eps * D, R, pi, gamma)
    V_m, Q_m = policy_evaluation(P - eps * D, R, pi, gamma)
    np.testing.assert_allclose(np.einsum("xsat,sat->x", G, D), (V_eps - V_m) / (2 * eps), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.einsum("xbsat,sat->xb", GQ, D), (Q_eps - Q_m) / (2 * eps), rtol=1e-6, atol=1e-8)


def test_bad_inputs_raise_value_error():
    P, R = two_state_chain()
    with pytest.raises(ValueError, match="gamma"):
        policy_evaluation(P, R, np.ones((2, 1)), 1.0)
    with pytest.raises(ValueError, match="sum to one"):
        policy_evaluation(P * 0.5, R, np.ones((2, 1)), 0.9)
    with pytest.raises(ValueError, match="rewards"):
        value_iteration(P, np.ones((3, 1)), 0.9)
