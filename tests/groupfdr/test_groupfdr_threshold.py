"""The data-adaptive threshold of the Gaussian mirror (Xing et al. Eq. 2.5) against hand-computed cases."""

import numpy as np
import pytest

from repro.methods.mirror import data_adaptive_threshold, fdp_curve, select_by_threshold


def brute_force_selection(M, q, offset=0):
    """The definition read literally on a fine grid of t plus the |M| values; returns {j : M_j >= tau}.

    On the continuum FDP^(t) is constant on each (|M|_(k), |M|_(k+1)], and every t above max |M| has
    FDP^ = 0 and selects nothing, so the selected sets (not the t values) are what must agree."""
    ts = np.unique(np.concatenate([np.abs(M[M != 0]), np.linspace(1e-9, np.abs(M).max() + 1, 2001)]))
    for t in ts:
        if (offset + np.sum(M <= -t)) / max(np.sum(M >= t), 1) <= q:
            return np.nonzero(M >= t)[0].tolist()
    return []


def test_hand_computed_case():
    M = np.array([3.0, 2.0, -1.0, 1.5, 0.5])
    # q = 0.5: at t = 0.5, #{M <= -0.5} = 1 and #{M >= 0.5} = 4: FDP = 0.25 <= 0.5
    assert data_adaptive_threshold(M, 0.5) == 0.5
    assert select_by_threshold(M, 0.5).tolist() == [0, 1, 3, 4]
    # q = 0.2: t = 0.5 gives 1/4, t = 1 gives 1/3 (M = -1 counts at t = 1), t = 1.5 gives 0/3
    assert data_adaptive_threshold(M, 0.2) == 1.5
    assert select_by_threshold(M, 0.2).tolist() == [0, 1, 3]


def test_ties_count_on_both_sides():
    M = np.array([2.0, 2.0, -2.0, 1.0])
    # t = 1: 1 negative / 3 positives = 1/3; t = 2: -2 <= -2 still counts: 1/2
    assert data_adaptive_threshold(M, 0.4) == 1.0
    assert select_by_threshold(M, 0.4).tolist() == [0, 1, 3]
    assert data_adaptive_threshold(M, 0.3) == np.inf
    assert select_by_threshold(M, 0.3).size == 0


def test_no_selection():
    assert data_adaptive_threshold(np.array([-1.0, -2.0, -0.5]), 0.2) == np.inf
    assert data_adaptive_threshold(np.zeros(5), 0.2) == np.inf  # t > 0 excludes every zero statistic
    assert select_by_threshold(np.array([1.0, -1.0]), 0.5).size == 0  # 1/1 > 0.5


def test_all_selected():
    M = np.array([0.3, 1.0, 2.0, 5.0])
    assert data_adaptive_threshold(M, 0.05) == 0.3
    assert select_by_threshold(M, 0.05).tolist() == [0, 1, 2, 3]


def test_knockoff_plus_offset():
    M = np.arange(5.0, 0.0, -1.0)  # five positives, no negatives
    assert data_adaptive_threshold(M, 0.1, offset=1) == np.inf  # (1 + 0) / 5 = 0.2 > 0.1
    assert data_adaptive_threshold(M, 0.2, offset=1) == 1.0


@pytest.mark.parametrize("seed", range(20))
def test_matches_literal_definition_with_ties(seed):
    rng = np.random.default_rng(seed)
    M = np.round(rng.normal(0.5, 1.5, size=30), 1)  # rounding creates ties and zeros
    for q in (0.05, 0.1, 0.2, 0.5):
        for offset in (0, 1):
            assert select_by_threshold(M, q, offset=offset).tolist() == brute_force_selection(M, q, offset)


def test_matches_knockpy_on_continuous_statistics():
    from knockpy.knockoff_stats import data_dependent_threshhold

    rng = np.random.default_rng(0)
    for _ in range(50):
        W = rng.normal(0.8, 1.0, size=40)  # no ties, no zeros: knockpy's and our conventions agree
        for q in (0.1, 0.2):
            for offset in (0, 1):
                assert data_adaptive_threshold(W, q, offset=offset) == data_dependent_threshhold(W, q, offset)


def test_fdp_curve_and_bad_input():
    M = np.array([3.0, -1.0, 2.0])
    np.testing.assert_allclose(fdp_curve(M, [1.0, 2.5]), [1 / 2, 0 / 1])
    with pytest.raises(ValueError, match="q must lie"):
        data_adaptive_threshold(M, 1.5)
    with pytest.raises(ValueError, match="NaN"):
        data_adaptive_threshold(np.array([1.0, np.nan]), 0.1)
