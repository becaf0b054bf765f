"""Neural variant: Permutation SHAP (ours vs the shap package), SHAP derivatives, HSIC scale choice."""

import numpy as np
import pytest

from repro.methods.mirror import NeuralGroupMirror, block_statistic
from repro.stats.hsic import choose_mirror_scale, hsic
from repro.stats.permutation_shap import permutation_shap, shap_permutation_explainer, smoothed_derivatives


def _additive(A):
    return 1.5 * A[:, 0] - 2.0 * A[:, 1] + np.sin(A[:, 2]) + A[:, 3] ** 2


def test_permutation_shap_matches_shap_and_closed_form_on_additive_model():
    rng = np.random.default_rng(0)
    background, X = rng.standard_normal((25, 5)), rng.standard_normal((6, 5))
    ours = permutation_shap(_additive, X, background, rng=rng)
    theirs = shap_permutation_explainer(_additive, X, background, seed=1)
    parts = [lambda a: 1.5 * a, lambda a: -2.0 * a, np.sin, np.square, lambda a: 0 * a]
    exact = np.column_stack([g(X[:, k]) - g(background[:, k]).mean() for k, g in enumerate(parts)])
    # additive f: every ordering gives the exact Shapley value, so only rounding separates the three
    np.testing.assert_allclose(ours, exact, atol=1e-12)
    np.testing.assert_allclose(theirs, exact, atol=1e-12)


def test_permutation_shap_efficiency_on_an_interaction_model():
    f = lambda A: A[:, 0] * A[:, 1] + np.tanh(A[:, 2] * A[:, 0])
    rng = np.random.default_rng(1)
    background, X = rng.standard_normal((20, 4)), rng.standard_normal((5, 4))
    phi = permutation_shap(f, X, background, n_permutations=2, rng=rng)
    # efficiency holds for every single ordering: sum_k phi_k = f(x) - mean_b f(b)
    np.testing.assert_allclose(phi.sum(1), f(X) - f(background).mean(), atol=1e-12)


def test_shap_derivative_of_a_linear_model_is_its_coefficient():
    rng = np.random.default_rng(2)
    beta = np.array([0.7, -1.2, 0.0, 2.0])
    background, X = rng.standard_normal((30, 4)), rng.standard_normal((60, 4))
    phi = permutation_shap(lambda A: A @ beta, X, background, rng=rng)
    D = smoothed_derivatives(X, phi)
    np.testing.assert_allclose(D, np.broadcast_to(beta, D.shape), atol=1e-8)
    # so the neural block statistic is sqrt(m) times GM's |b+ + b-| - |b+ - b-| on the coefficients
    assert block_statistic(D[:, [0]], D[:, [1]]) == pytest.approx(
        np.sqrt(60) * (abs(0.7 - 1.2) - abs(0.7 + 1.2)), rel=1e-8)


def test_hsic_detects_dependence_and_scale_choice_balances_the_copies():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((200, 1))
    assert hsic(a, a**2) > 5 * hsic(a, rng.standard_normal((200, 1)))
    # x independent of the rest: (x + c z, x - c z) are independent Gaussians exactly when c = sd(x)
    X = rng.standard_normal((300, 4)) * np.array([2.0, 1.0, 1.0, 1.0])
    Z = rng.standard_normal((300, 4))
    c = choose_mirror_scale(X, np.array([0]), Z, X.std(0), (0.25, 0.5, 1.0, 1.5, 2.0))
    assert c == 1.0


def test_neural_mirror_block_one_equals_coordinate_statistics():
    """Block size 1: the group statistic is the coordinate-wise NGM statistic on the same fit."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((800, 6))
    y = np.tanh(2 * X[:, 0]) + 0.3 * rng.standard_normal(800)
    est = NeuralGroupMirror(None, max_iter=80, hidden=(16,), n_explain=40, n_background=15, hsic_samples=100,
                            random_state=0).fit(X, y)
    D = est.derivatives_
    coord = np.linalg.norm(D[:, :6] + D[:, 6:], axis=0) - np.linalg.norm(D[:, :6] - D[:, 6:], axis=0)
    np.testing.assert_allclose(est.statistics_, coord, rtol=1e-12)
    assert est.statistics_[0] == est.statistics_.max()  # the planted feature ranks first
