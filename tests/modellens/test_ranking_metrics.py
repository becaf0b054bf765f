"""repro.metrics.ranking and the modellens evaluation against hand-worked cases from the reference's
definitions (luisrui/ModelLens, module/utils/metric.py, evaluate_ranking_mlp)."""

import numpy as np
import pytest
from scipy.stats import weightedtau

from repro.metrics.ranking import (
    hit_at_k,
    minmax,
    ndcg_at_k,
    pair_weighted_mean,
    recall_at_k,
    weighted_tau_bottom,
    weighted_tau_top,
)
from repro.papers.modellens.experiment import evaluate_truth


def test_ndcg_hand_case():
    # gains of the predicted order: 1, 3, 2 -> DCG@3 = 1 + 3/log2(3) + 2/2; ideal 3 + 2/log2(3) + 1/2
    truth = np.array([3.0, 2.0, 1.0])
    pred = np.array([0.5, 0.1, 0.9])
    dcg = 1 + 3 / np.log2(3) + 2 / 2
    ideal = 3 + 2 / np.log2(3) + 1 / 2
    assert ndcg_at_k(truth, pred, 3) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(truth, pred, 1) == pytest.approx(1 / 3)
    assert ndcg_at_k(truth, truth, 2) == 1.0


def test_ndcg_reference_gain_hand_case():
    # the reference: rel = truth min-max scaled = (1, 0.5, 0), gain 2^rel - 1 = (1, sqrt2 - 1, 0);
    # predicted order 2, 0, 1 -> DCG@3 = 0 + 1/log2(3) + (sqrt2 - 1)/2; ideal 1 + (sqrt2 - 1)/log2(3) + 0
    truth = np.array([3.0, 2.0, 1.0])
    pred = np.array([0.5, 0.1, 0.9])
    rel = minmax(truth)
    assert rel == pytest.approx([1.0, 0.5, 0.0])
    dcg = 1 / np.log2(3) + (np.sqrt(2) - 1) / 2
    ideal = 1 + (np.sqrt(2) - 1) / np.log2(3)
    assert ndcg_at_k(rel, pred, 3, gain="exponential") == pytest.approx(dcg / ideal)
    assert ndcg_at_k(rel, pred, 1, gain="exponential") == 0.0  # the true worst first
    with pytest.raises(ValueError, match="gain"):
        ndcg_at_k(rel, pred, 1, gain="log")


def test_ndcg_ties_are_pessimistic():
    truth = np.array([0.0, 1.0])
    assert ndcg_at_k(truth, np.zeros(2), 1) == 0.0  # a constant predictor gets the worst order
    assert hit_at_k(truth, np.zeros(2), 1) == 0.0
    assert recall_at_k(truth, np.zeros(2), 1) == 0.0


def test_hit_and_recall_hand_case():
    # true order 0 > 1 > 2 > 3 > 4; predicted order 1, 3, 0, 4, 2
    truth = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    pred = np.array([3.0, 5.0, 1.0, 4.0, 2.0])
    assert hit_at_k(truth, pred, 2) == 0.0 and hit_at_k(truth, pred, 3) == 1.0
    assert recall_at_k(truth, pred, 2) == pytest.approx(1 / 2)  # {1, 3} & {0, 1}
    assert recall_at_k(truth, pred, 3) == pytest.approx(2 / 3)  # {1, 3, 0} & {0, 1, 2}
    assert recall_at_k(truth, pred, 10) == 1.0  # K above n: out of min(K, n)


def test_weighted_tau_hand_case():
    # Three candidates, true ranks x = (0, 1, 2) (0 best), predicted ranks y = (2, 0, 1). The reference
    # calls weightedtau(x, y, rank=None): one order, by decreasing x, so candidate 2 (truly worst) has
    # rank 0 and weight 1/(0+1), candidate 1 weight 1/2, candidate 0 weight 1/3; a pair weighs the sum.
    # Pairs (0,1) discordant 1/3+1/2, (0,2) discordant 1/3+1, (1,2) concordant 1/2+1:
    # tau = (-5/6 - 8/6 + 9/6) / (22/6) = -2/11.
    truth = np.array([3.0, 2.0, 1.0])
    pred = np.array([1.0, 3.0, 2.0])  # ranks (2, 0, 1)
    assert weighted_tau_bottom(truth, pred) == pytest.approx(-2 / 11)
    # scipy's default rank=True averages this with the order by y (-6/11): -4/11, what we used before
    assert weightedtau([0, 1, 2], [2, 0, 1]).statistic == pytest.approx(-4 / 11)
    assert weighted_tau_bottom(truth, truth) == pytest.approx(1.0)
    assert weighted_tau_bottom(truth, np.zeros(3)) == 0.0  # a constant prediction carries no order


def test_weighted_tau_spec_example():
    # spec: swapping the top two of ten scores 0.98 in the reference's call, the bottom two 0.89
    truth = np.arange(10, 0, -1, dtype=float)  # candidate 0 best
    top_swap, bottom_swap = truth.copy(), truth.copy()
    top_swap[[0, 1]] = top_swap[[1, 0]]
    bottom_swap[[8, 9]] = bottom_swap[[9, 8]]
    assert weighted_tau_bottom(truth, top_swap) == pytest.approx(0.98, abs=0.005)
    assert weighted_tau_bottom(truth, bottom_swap) == pytest.approx(0.89, abs=0.005)
    # the top-weighted tau reverses the weights: a mistake at the top costs more
    assert weighted_tau_top(truth, top_swap) == pytest.approx(0.89, abs=0.005)
    assert weighted_tau_top(truth, bottom_swap) == pytest.approx(0.98, abs=0.005)
    assert weighted_tau_top(truth, truth) == pytest.approx(1.0) and weighted_tau_top(truth, -truth) == pytest.approx(
        -1.0
    )


def _reference_metrics(truth, pred, k):
    """The reference's per-group formulas written out (its _to_rank, _ndcg_at_k, weightedtau call)."""

    def to_rank(v):
        order = np.argsort(-v)
        ranks = np.empty_like(order)
        ranks[order] = np.arange(len(v))
        return ranks

    rel = (truth - truth.min()) / (truth.max() - truth.min() + 1e-9)
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = float((2.0 ** rel[np.argsort(-pred)][:k] - 1) @ disc)
    idcg = float((2.0 ** rel[np.argsort(-truth)][:k] - 1) @ disc) + 1e-9
    return dcg / idcg, weightedtau(to_rank(truth), to_rank(pred), rank=None).statistic


def test_agrees_with_the_reference_formulas_on_random_groups():
    # without ties the two implementations agree up to the reference's 1e-9 guards
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 25))
        truth, pred = rng.random(n), rng.random(n)
        ndcg, tau = _reference_metrics(truth, pred, min(5, n))
        assert ndcg_at_k(minmax(truth), pred, 5, gain="exponential") == pytest.approx(ndcg, abs=1e-7)
        assert weighted_tau_bottom(truth, pred) == pytest.approx(tau, abs=1e-12)


def test_pooled_over_groups_as_the_reference():
    # taus weighted by pairs n(n-1)/2: a group of 3 (tau -2/11, 3 pairs) and a group of 2 (tau 1, 1 pair)
    assert pair_weighted_mean([-2 / 11, 1.0], [3, 2]) == pytest.approx((3 * -2 / 11 + 1) / 4)
    assert np.isnan(pair_weighted_mean([1.0], [1]))
    items = [(np.array([3.0, 2.0, 1.0]), np.array([1.0, 3.0, 2.0])), (np.array([2.0, 1.0]), np.array([1.0, 0.0]))]
    out = evaluate_truth(items, ks=[3])
    assert out["tau_bottom"] == pytest.approx(5 / 44)
    # NDCG@3, Hit@3, Recall@3 only over groups with at least 3 candidates: the first alone
    assert out["ndcg@3"] == pytest.approx(ndcg_at_k(minmax(items[0][0]), items[0][1], 3, gain="exponential"))
    assert out["hit@3"] == 1.0 and out["recall@3"] == 1.0
    assert out["hit@1"] == pytest.approx(0.5)  # every group: the first misses, the second hits
    assert np.isnan(evaluate_truth(items, ks=[4])["ndcg@4"])  # no group of 4


def test_bad_input_is_an_error():
    with pytest.raises(ValueError, match="one length"):
        ndcg_at_k([1.0, 2.0], [1.0], 1)
    with pytest.raises(ValueError, match="non-negative"):
        ndcg_at_k([-1.0, 2.0], [1.0, 0.0], 1)
    with pytest.raises(ValueError, match="one length"):
        pair_weighted_mean([1.0, 2.0], [3])
