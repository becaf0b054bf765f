"""repro.metrics.ranking against hand-worked cases and the spec's weighted-tau example."""

import numpy as np
import pytest

from repro.metrics.ranking import hit_at_k, ndcg_at_k, weighted_tau_bottom, weighted_tau_top


def test_ndcg_hand_case():
    # gains of the predicted order: 1, 3, 2 -> DCG@3 = 1 + 3/log2(3) + 2/2; ideal 3 + 2/log2(3) + 1/2
    truth = np.array([3.0, 2.0, 1.0])
    pred = np.array([0.5, 0.1, 0.9])
    dcg = 1 + 3 / np.log2(3) + 2 / 2
    ideal = 3 + 2 / np.log2(3) + 1 / 2
    assert ndcg_at_k(truth, pred, 3) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(truth, pred, 1) == pytest.approx(1 / 3)
    assert ndcg_at_k(truth, truth, 2) == 1.0


def test_ndcg_ties_are_pessimistic():
    truth = np.array([0.0, 1.0])
    assert ndcg_at_k(truth, np.zeros(2), 1) == 0.0          # a constant predictor gets the worst order
    assert hit_at_k(truth, np.zeros(2), 1) == 0.0


def test_weighted_tau_spec_example():
    # spec: swapping the top two of ten scores 0.98 in the reference's call, the bottom two 0.89
    truth = np.arange(10, 0, -1, dtype=float)               # candidate 0 best
    top_swap, bottom_swap = truth.copy(), truth.copy()
    top_swap[[0, 1]] = top_swap[[1, 0]]
    bottom_swap[[8, 9]] = bottom_swap[[9, 8]]
    assert weighted_tau_bottom(truth, top_swap) == pytest.approx(0.98, abs=0.005)
    assert weighted_tau_bottom(truth, bottom_swap) == pytest.approx(0.89, abs=0.005)
    # the top-weighted tau reverses the weights: a mistake at the top costs more
    assert weighted_tau_top(truth, top_swap) == pytest.approx(0.89, abs=0.005)
    assert weighted_tau_top(truth, bottom_swap) == pytest.approx(0.98, abs=0.005)
    assert weighted_tau_top(truth, truth) == pytest.approx(1.0) and weighted_tau_top(truth, -truth) == pytest.approx(-1.0)


def test_bad_input_is_an_error():
    with pytest.raises(ValueError, match="one length"):
        ndcg_at_k([1.0, 2.0], [1.0], 1)
    with pytest.raises(ValueError, match="non-negative"):
        ndcg_at_k([-1.0, 2.0], [1.0, 0.0], 1)
