"""repro.probes: the batched logistic probe trainer recovers a planted linear direction; the chance level
of the cosine between two directions."""

from __future__ import annotations

import numpy as np
import pytest

from repro.probes import ProbeConfig, cosine, cross_fit, random_abs_cosine, train_probes, train_test_split


def _planted(n=400, d=16, seed=0):
    """Site 0: labels are the sign of a planted direction; site 1: pure noise (no signal)."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)
    X = rng.normal(size=(n, 2, d))
    y = (X[:, 0] @ direction > 0).astype(int)
    return X, y, direction


def test_probe_recovers_the_planted_direction_and_not_noise():
    X, y, direction = _planted()
    fit = train_probes(X, y, split=train_test_split(len(y), 0.3, seed=1), seed=2)
    assert fit.test_accuracy[0] > 0.9          # separable site
    assert abs(fit.test_accuracy[1] - 0.5) < 0.15  # noise site stays near chance
    # unit-variance features: the standardised direction is the planted one
    assert cosine(fit.weight[:1], direction[None])[0] > 0.9


def test_cosine_of_orthogonal_and_parallel_directions():
    a = np.array([[1.0, 0.0], [2.0, 2.0], [0.0, 0.0]])
    b = np.array([[0.0, 3.0], [1.0, 1.0], [1.0, 0.0]])
    assert np.allclose(cosine(a, b), [0.0, 1.0, 0.0])


def test_two_probes_on_orthogonal_planted_signals_have_near_zero_cosine():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 1, 12))
    y1, y2 = (X[:, 0, 0] > 0).astype(int), (X[:, 0, 1] > 0).astype(int)
    split = train_test_split(600, 0.3, seed=0)
    f1, f2 = train_probes(X, y1, split=split), train_probes(X, y2, split=split)
    assert abs(cosine(f1.weight, f2.weight)[0]) < 0.2


def test_random_abs_cosine_matches_closed_forms_and_simulation():
    """d = 1: |cos| = 1; d = 2: the angle is uniform, E|cos| = 2/pi; d = 3: |cos| is uniform on [0, 1].
    At d = 24, 20,000 random pairs: |cos| has sd sqrt(1/24 - 0.165^2) = 0.12, se 0.0009; tolerance 4 se."""
    assert random_abs_cosine(1) == pytest.approx(1.0)
    assert random_abs_cosine(2) == pytest.approx(2 / np.pi)
    assert random_abs_cosine(3) == pytest.approx(0.5)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 20_000, 24))
    assert np.abs(cosine(a, b)).mean() == pytest.approx(random_abs_cosine(24), abs=0.004)
    assert random_abs_cosine(576) == pytest.approx(np.sqrt(2 / (np.pi * 576)), rel=0.01)
    with pytest.raises(ValueError, match="positive integer"):
        random_abs_cosine(0)


def test_cross_fit_predicts_every_item_out_of_fold():
    X, y, _ = _planted(n=120)
    pred = cross_fit(X, y, folds=3, cfg=ProbeConfig(epochs=100))
    assert pred.shape == (2, 120) and (pred[0] == y).mean() > 0.85


@pytest.mark.parametrize("bad, match", [((np.zeros((4, 3)), np.zeros(4)), "items, sites, dim"),
                                        ((np.zeros((4, 1, 3)), np.array([0, 1, 2, 0])), "0 or 1"),
                                        ((np.zeros((4, 1, 3)), np.zeros(5)), "one per item")])
def test_bad_probe_input_is_refused_by_name(bad, match):
    with pytest.raises(ValueError, match=match):
        train_probes(*bad, split=(np.array([0, 1]), np.array([2, 3])))
