"""The shared survival loss and C-index: hand-worked examples and agreement with sksurv / lifelines."""

import math

import numpy as np
import pytest
import torch

from repro.metrics.survival import concordance_index, discretize, nll_survival_loss, risk_from_logits, time_bins


def test_cindex_hand_example():
    # times 1..4, events [1, 0, 1, 1], risks [4, 3, 1, 2].
    # comparable pairs (i event, t_j > t_i): (0,1) (0,2) (0,3) (2,3) -> 4 pairs
    # concordant when risk_i > risk_j: (0,1) yes, (0,2) yes, (0,3) yes, (2,3) 1 > 2 no -> 3 / 4
    assert concordance_index([1, 0, 1, 1], [1, 2, 3, 4], [4, 3, 1, 2]) == pytest.approx(0.75)
    # a tied risk counts one half: risks [4, 3, 2, 2] -> (2,3) tied -> 3.5 / 4
    assert concordance_index([1, 0, 1, 1], [1, 2, 3, 4], [4, 3, 2, 2]) == pytest.approx(0.875)


def test_cindex_no_comparable_pair_is_an_error():
    with pytest.raises(ValueError, match="comparable"):
        concordance_index([0, 0], [1.0, 2.0], [0.1, 0.2])


@pytest.mark.parametrize("seed", range(5))
def test_cindex_matches_sksurv_and_lifelines(seed):
    from lifelines.utils import concordance_index as lifelines_ci
    from sksurv.metrics import concordance_index_censored

    rng = np.random.default_rng(seed)
    n = 60
    time = rng.integers(1, 15, n).astype(float)        # many tied times
    event = rng.random(n) < 0.6
    risk = np.round(rng.normal(size=n), 1)             # some tied risks
    ours = concordance_index(event, time, risk)
    assert ours == pytest.approx(concordance_index_censored(event, time, risk)[0], abs=1e-12)
    if seed == 0:
        # lifelines scores "higher = longer survival" and treats tied times differently; with distinct
        # times it equals sksurv exactly
        time_d = rng.permutation(n).astype(float) + 1
        assert concordance_index(event, time_d, risk) == pytest.approx(lifelines_ci(time_d, -risk, event), abs=1e-12)


def test_nll_hand_example():
    # two bins, hazards h = sigmoid(0) = 0.5 each; S(0) = 0.5, S(1) = 0.25
    logits = torch.zeros(3, 2)
    y = torch.tensor([0, 1, 1])
    event = torch.tensor([1.0, 1.0, 0.0])
    # uncensored at bin 0: -log S(-1) - log h(0) = log 2; uncensored at bin 1: -log S(0) - log h(1) = 2 log 2;
    # censored at bin 1: -log S(1) = 2 log 2 -> mean 5/3 log 2
    assert float(nll_survival_loss(logits, y, event)) == pytest.approx(5 / 3 * math.log(2), rel=1e-6)


def test_risk_orders_by_hazard_and_bins_use_uncensored_quartiles():
    risk = risk_from_logits(torch.tensor([[-2.0, -2.0], [0.0, 0.0], [2.0, 2.0]]))
    assert torch.all(risk[1:] > risk[:-1])             # higher hazards -> higher risk
    times = np.array([1, 2, 3, 4, 5, 100, 200.0])
    events = np.array([1, 1, 1, 1, 1, 0, 0])
    cuts = time_bins(times, events, 4)
    np.testing.assert_allclose(cuts, [2, 3, 4])        # quartiles of 1..5, censored times ignored
    np.testing.assert_array_equal(discretize(times, cuts), [0, 0, 1, 2, 3, 3, 3])
