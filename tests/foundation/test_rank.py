"""repro.stats.rank.spearman: equals scipy's rho on finite data, drops non-finite pairs, and is NaN where rho is
undefined (fewer than 3 pairs, a constant side)."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from repro.stats.rank import spearman


def test_matches_scipy_and_drops_non_finite_pairs():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=40), rng.normal(size=40)
    y[::7] = x[::7]  # some ties of rank structure
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    xn, yn = x.copy(), y.copy()
    xn[3], yn[10] = np.nan, np.inf
    keep = np.ones(40, bool)
    keep[[3, 10]] = False
    assert spearman(xn, yn) == pytest.approx(spearmanr(x[keep], y[keep]).statistic, abs=1e-12)
    assert spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)


@pytest.mark.parametrize("x,y", [([1, 2], [2, 1]), ([1, 2, 3], [5, 5, 5]), ([1, np.nan, 2, 3], [1, 2, np.nan, 3])])
def test_undefined_is_nan(x, y):
    assert np.isnan(spearman(x, y))


def test_lengths_must_match():
    with pytest.raises(ValueError, match="differ in length"):
        spearman([1, 2, 3], [1, 2])
