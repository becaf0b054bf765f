"""The claims checker's intervals on planted cases: it finds true effects, refuses noise, and pairs.

Each property is measured over simulated repeats of an experiment with N_UNITS units (25: e.g. a
5-fold CV repeated with 5 seeds; 10 for the null, where few units make intervals too narrow if
anything). At 10 units the same 4-standard-error effect passes about 92% of the time, not 95%: the
t quantile (2.26 against 1.96) is the price of keeping the null's coverage honest. Bounds allow for the repeats' own sampling error: with 300 repeats, a rate of
0.95 has a standard error of 0.013, so each asserted bound sits at least two of them below the rate
the interval should deliver.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.claims import FAIL, INCONCLUSIVE, PASS, verdict
from repro.stats.intervals import bootstrap_interval, cv_corrected, expanded_alpha, newcombe_interval, wilson_interval

N_UNITS, REPEATS = 25, 300


def _verdicts(effect_in_se: float, seed: int, n: int = N_UNITS) -> list[str]:
    """Verdicts of 'mean > 0' on n normal values whose mean is effect_in_se standard errors."""
    rng = np.random.default_rng(seed)
    sd = 1.0
    out = []
    for r in range(REPEATS):
        x = rng.normal(effect_in_se * sd / np.sqrt(n), sd, n)
        out.append(verdict(bootstrap_interval(x, n_boot=1000, seed=r), ">", 0.0))
    return out


def test_a_true_effect_of_four_standard_errors_passes():
    v = _verdicts(4.0, seed=1)
    assert v.count(PASS) / REPEATS >= 0.95


@pytest.mark.parametrize("n", [10, N_UNITS])
def test_a_null_effect_is_inconclusive_not_pass(n):
    v = _verdicts(0.0, seed=2, n=n)
    assert v.count(INCONCLUSIVE) / REPEATS >= 0.90
    assert v.count(PASS) / REPEATS <= 0.05


def test_an_effect_of_the_wrong_sign_fails():
    v = _verdicts(-4.0, seed=3)
    assert v.count(FAIL) / REPEATS >= 0.95 and PASS not in v


def test_paired_intervals_are_narrower_than_unpaired_on_correlated_data():
    rng = np.random.default_rng(4)
    difficulty = rng.normal(0.6, 0.1, N_UNITS)  # shared by both methods on each fold
    ours = difficulty + 0.03 + rng.normal(0, 0.01, N_UNITS)
    base = difficulty + rng.normal(0, 0.01, N_UNITS)
    paired = bootstrap_interval(ours, base, seed=0)
    unpaired = bootstrap_interval(ours, base, paired=False, seed=0)
    assert paired.estimate == pytest.approx(unpaired.estimate)
    assert (paired.high - paired.low) < 0.3 * (unpaired.high - unpaired.low)
    assert verdict(paired, ">", 0.0) == PASS and verdict(unpaired, ">", 0.0) == INCONCLUSIVE


def test_expanded_percentile_matches_the_t_interval_width_for_normal_data():
    """For a normal sample the expanded bootstrap interval is close to the t-interval (Hesterberg 2015)."""
    from scipy import stats

    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, 12)
    iv = bootstrap_interval(x, n_boot=20000, seed=1)
    half_t = stats.t.ppf(0.975, 11) * x.std(ddof=1) / np.sqrt(12)
    assert (iv.high - iv.low) / 2 == pytest.approx(half_t, rel=0.12)  # bootstrap sd uses 1/n: -4%, +MC error
    assert expanded_alpha(0.05, 12) < 0.05 and expanded_alpha(0.05, 1000) == pytest.approx(0.05, rel=0.01)


def test_wilson_interval_matches_its_closed_form_and_stays_in_unit_range():
    iv = wilson_interval(95, 100)
    # closed form for p = 0.95, n = 100, z = 1.959964: centre 0.9415, half-width 0.0438 (Wilson 1927)
    assert iv.low == pytest.approx(0.8882, abs=1e-3) and iv.high == pytest.approx(0.9785, abs=1e-3)
    zero = wilson_interval(0, 50)
    assert zero.low == 0.0 and 0 < zero.high < 0.1


def test_newcombe_interval_matches_the_worked_examples_of_newcombe_1998():
    # Newcombe (1998), Stat. Med. 17, Table II, method 10: 56/70 - 48/80 -> 0.0524 to 0.3339;
    # 9/10 - 3/10 -> 0.1705 to 0.8090
    for (a, n, b, m), (lo, hi) in {(56, 70, 48, 80): (0.0524, 0.3339), (9, 10, 3, 10): (0.1705, 0.8090)}.items():
        iv = newcombe_interval(a, n, b, m)
        assert iv.low == pytest.approx(lo, abs=6e-4) and iv.high == pytest.approx(hi, abs=6e-4)
    flipped = newcombe_interval(48, 80, 56, 70)
    assert flipped.low == pytest.approx(-0.3339, abs=6e-4) and flipped.high == pytest.approx(-0.0524, abs=6e-4)
    with pytest.raises(ValueError, match="0 <= successes <= trials"):
        newcombe_interval(3, 2, 1, 5)


def test_slope_interval_recovers_a_planted_slope():
    rng = np.random.default_rng(6)
    x = np.repeat(np.arange(2, 12, 2), 4).astype(float)
    y = -0.3 * x + rng.normal(0, 0.2, x.size)
    iv = bootstrap_interval(y, x, statistic="slope", seed=0)
    assert iv.low < -0.3 < iv.high and iv.high < 0


def test_within_verdicts():
    from repro.stats.intervals import Interval

    def iv(lo, hi):
        return Interval((lo + hi) / 2, lo, hi, 0.95, 10, "test")

    assert verdict(iv(0.93, 0.97), "within", 0.95, 0.03) == PASS
    assert verdict(iv(0.85, 0.90), "within", 0.95, 0.03) == FAIL
    assert verdict(iv(0.90, 0.94), "within", 0.95, 0.03) == INCONCLUSIVE


def test_expanded_percentiles_is_the_interval_bootstrap_interval_reports():
    """One definition of the expanded percentile: the bootstrap interval's bounds come from it."""
    from repro.stats.intervals import expanded_percentiles

    x = np.random.default_rng(3).normal(1.0, 1.0, 9)
    iv = bootstrap_interval(x, n_boot=2000, seed=4)
    boot = x[np.random.default_rng(4).integers(0, 9, size=(2000, 9))].mean(axis=1)
    assert expanded_percentiles(boot, 9) == pytest.approx((iv.low, iv.high))
    # wider than the plain percentile interval at few units, equal to it in the limit
    plain = np.quantile(boot, [0.025, 0.975])
    low, high = expanded_percentiles(boot, 9)
    assert low < plain[0] and high > plain[1]


def test_cv_corrected_interval_covers_the_generalisation_error_that_a_bootstrap_over_folds_misses():
    """Repeated 5 x 5-fold CV of a learner with a closed-form error: the training mean, scored by
    squared error on N(0, 1) test points, has expected test error 1 + 1 / n_train. The 25 folds of one
    dataset share most of their training points, so a bootstrap over folds treats one dataset's
    luck as signal: over 200 datasets its 95% interval covers the true error about 58% of the
    time. Nadeau and Bengio's correction restores the coverage (measured 0.945)."""
    rng = np.random.default_rng(0)
    n, k, r, datasets = 100, 5, 5, 200
    truth = 1 + 1 / (n * (k - 1) / k)
    covered = {"folds": 0, "corrected": 0}
    for d in range(datasets):
        x = rng.normal(size=n)
        errors = []
        for _ in range(r):
            perm = rng.permutation(n)
            for test in np.array_split(perm, k):
                train = np.setdiff1d(perm, test)
                errors.append(np.mean((x[test] - x[train].mean()) ** 2))
        naive = bootstrap_interval(errors, n_boot=2000, seed=d)
        corrected = cv_corrected(naive, 1 / (k - 1))
        covered["folds"] += naive.low <= truth <= naive.high
        covered["corrected"] += corrected.low <= truth <= corrected.high
        assert corrected.estimate == naive.estimate and corrected.low <= naive.low and corrected.high >= naive.high
    assert covered["corrected"] / datasets >= 0.91  # 0.95 less two standard errors of 200 datasets (0.015)
    assert covered["folds"] / datasets <= 0.80
    with pytest.raises(ValueError, match="n_test / n_train"):
        cv_corrected(naive, 0.0)


def test_t_interval_matches_its_closed_form():
    from repro.stats.intervals import t_interval

    ci = t_interval([1.0, 2.0, 3.0])  # mean 2, sd 1, t_{0.975, 2} = 4.302653
    assert (ci.estimate, ci.n, ci.method) == (2.0, 3, "t")
    assert ci.low == pytest.approx(2 - 4.302653 / 3 ** 0.5, abs=1e-6)
    assert ci.high == pytest.approx(2 + 4.302653 / 3 ** 0.5, abs=1e-6)
    lone = t_interval([0.5])
    assert lone.estimate == 0.5 and np.isnan(lone.low) and np.isnan(lone.high)
