"""The fixed-variance Gaussian mixture (repro.methods.gmm): EM, the chart's gradient, Fisher closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from repro.methods.gmm import (Mixture, chart_size, em_fit, fisher_information, from_chart, loss_and_grad,
                               mean_block, to_chart)
from repro.papers.collapse.synth import planted_mixture

WEIGHTS = [0.4, 0.3, 0.25, 0.05]


def test_em_recovers_planted_means_and_weights():
    truth = planted_mixture(WEIGHTS)
    rng = np.random.default_rng(0)
    x, labels = truth.sample(4000, rng)
    start = Mixture(np.full(4, 0.25), truth.means + rng.normal(0, 1.0, truth.means.shape), 1.0)
    fit, _ = em_fit(x, start)
    counts = np.bincount(labels, minlength=4)
    # separated components: EM's weights are the label frequencies, its means the label means (to e^-30)
    assert np.allclose(fit.weights, counts / len(x), atol=1e-6)
    for k in range(4):  # each mean within 4 standard errors sigma / sqrt(n_k) of the planted one
        assert np.linalg.norm(fit.means[k] - truth.means[k]) < 4 * np.sqrt(2 / counts[k])


def test_dead_component_stays_dead_and_keeps_its_mean():
    mix = Mixture(np.array([0.5, 0.5, 0.0]), np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]]), 1.0)
    x, _ = mix.sample(500, np.random.default_rng(1))
    fit, _ = em_fit(x, mix)
    assert fit.weights[2] == 0.0 and np.array_equal(fit.means[2], [0.0, 10.0])


def test_gradient_matches_finite_differences():
    truth = planted_mixture(WEIGHTS, radius=3.0)  # overlapping components: every term of the score matters
    x, _ = truth.sample(300, np.random.default_rng(2))
    w, ref = to_chart(truth)
    K, d = 4, 2
    loss, grad = loss_and_grad(w, ref, K, d, 1.0, x)
    eps = 1e-6
    fd = np.array([(loss_and_grad(w + eps * e, ref, K, d, 1.0, x)[0] - loss_and_grad(w - eps * e, ref, K, d, 1.0, x)[0])
                   / (2 * eps) for e in np.eye(len(w))])
    assert np.allclose(grad, fd, atol=1e-7)
    assert np.allclose(from_chart(w, ref, K, d, 1.0).weights, truth.weights)
    assert len(w) == chart_size(K, d) == 11


def test_fisher_matches_the_closed_form_of_separated_components():
    """Separated components: the mean block of component k is π_k / σ² I; the weight block is
    4 (I + s sᵀ / π_ref) in the square-root chart (the multinomial's Fisher metric).

    Stratified Monte Carlo with m = 4000 draws per component: the mean block's entries have a
    relative standard error of about sqrt(2 / 4000) = 2%; the tolerance is 10%.
    """
    sigma = 0.5
    truth = planted_mixture(WEIGHTS, sigma=sigma, radius=8.0)
    w, ref = to_chart(truth)
    info = fisher_information(truth, ref, m=4000, rng=np.random.default_rng(3))
    for k, pk in enumerate(WEIGHTS):
        assert np.allclose(mean_block(info, k, 4, 2), pk / sigma ** 2 * np.eye(2), rtol=0.1, atol=0.1 * pk / sigma ** 2)
    s = w[:3]
    assert np.allclose(info[:3, :3], 4 * (np.eye(3) + np.outer(s, s) / WEIGHTS[ref]), rtol=1e-6)


def test_a_dead_component_leaves_d_plus_one_null_directions():
    """Weight exactly 0: the score in its mean and in s_k = sqrt(π_k) vanishes identically."""
    mix = Mixture(np.array([0.5, 0.3, 0.2, 0.0]), planted_mixture(WEIGHTS).means, 1.0)
    w, ref = to_chart(mix)
    eig = np.linalg.eigvalsh(fisher_information(mix, ref, m=500, rng=np.random.default_rng(4)))
    assert np.sum(eig < 1e-4 * eig.max()) == 3
    # a weight of 1e-6 (far above the tails' e^-32): only its mean is near-null, the weight
    # direction keeps its multinomial value 4 (up to MC error of a few %)
    mix = Mixture(np.array([0.5, 0.3, 0.2 - 1e-6, 1e-6]), planted_mixture(WEIGHTS).means, 1.0)
    w, ref = to_chart(mix)
    info = fisher_information(mix, ref, m=2000, rng=np.random.default_rng(4))
    eig = np.linalg.eigvalsh(info)
    assert np.sum(eig < 1e-4 * eig.max()) == 2
    assert info[2, 2] == pytest.approx(4 * (1 + 1e-6 / 0.5), rel=1e-3)


def test_bad_mixtures_are_refused():
    with pytest.raises(ValueError, match="sum to 1"):
        Mixture(np.array([0.5, 0.4]), np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="sigma"):
        Mixture(np.array([0.5, 0.5]), np.zeros((2, 2)), 0.0)
    with pytest.raises(ValueError, match="weights must be > 0"):
        planted_mixture([0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="dimensions"):
        em_fit(np.zeros((10, 3)), planted_mixture(WEIGHTS))
