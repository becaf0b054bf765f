"""Fidelity to the Gaussian mirror's reference implementation (the GM R package): standardisation,
the penalty grid, the package's selection rule, and the lasso path's warm start."""

import numpy as np
import pytest

from repro.methods.mirror import (SELECTION_RULES, GroupGaussianMirror, _glmnet_like_lasso, choose_penalty,
                                  reference_lambda_grid, select_by_threshold, standardize, step_down_selection)
from repro.papers.groupfdr.synth import simulate_grouped


def package_rule(w, q):
    """A line-by-line transcription of the GM package's selection loop (R/gm.R), with q as given and
    no selection when the first estimate already exceeds q."""
    nz = w[w != 0]
    order = np.argsort(-nz, kind="stable")
    n_pos = int((w > 0).sum())
    est = np.zeros(len(nz))
    for i in range(1, n_pos + 1):
        cut = nz[order[i - 1]]
        est[i - 1] = np.sum(nz < -cut) / (i + 1)
    over = np.nonzero(est[:n_pos] - q > 0)[0]
    k = n_pos if over.size == 0 else over[0]
    return np.sort(np.nonzero(w != 0)[0][order[:k]])


@pytest.mark.parametrize("seed", range(30))
def test_step_down_rule_matches_the_package_loop(seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(60) + np.r_[np.full(12, 2.5 * rng.uniform()), np.zeros(48)]
    w[rng.choice(60, 10, replace=False)] = 0.0  # the lasso's exact zeros
    for q in (0.05, 0.1, 0.2, 0.3):
        assert step_down_selection(w, q).tolist() == package_rule(w, q).tolist()


def test_rules_differ_where_they_should():
    # positives 1..9 and one -1.5: Eq. 2.5 at t = 1 gives 1/9 > 0.1, at t = 1.5 1/8, at t = 2 0/8, so it
    # selects the eight M >= 2; the package's 1/(9 + 1) = 0.1 at the last cut is not > 0.1: all nine
    M = np.r_[np.arange(1.0, 10.0), -1.5]
    assert select_by_threshold(M, 0.1).tolist() == list(range(1, 9))
    assert step_down_selection(M, 0.1).tolist() == list(range(9))
    assert SELECTION_RULES.get("min_t_plus")(M, 0.1).tolist() == []
    # step-down stops at the first exceedance even when a later cut would pass again
    M = np.r_[10.0, 9.0, -9.5, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.5, 1.2, 1.1]
    assert step_down_selection(M, 0.2).tolist() == [0]  # 1/3 at the second cut; 1/5 at the fourth
    assert len(select_by_threshold(M, 0.2)) == 12  # Eq. 2.5: t = 1.1 gives 1/12 <= 0.2
    with pytest.raises(ValueError, match="unknown mirror selection rule"):
        GroupGaussianMirror(rule="min-t").fit(np.eye(5, 3) + 1.0 * np.arange(15).reshape(5, 3) ** 0.5, np.arange(5.0))


def test_standardise_is_rs_scale_and_rejects_constant_columns():
    X = np.random.default_rng(0).normal(3.0, 2.0, (40, 5))
    S = standardize(X)
    np.testing.assert_allclose(S.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(S.std(0, ddof=1), 1, rtol=1e-12)
    X[:, 2] = 1.0
    with pytest.raises(ValueError, match=r"constant column\(s\) \[2\]"):
        standardize(X)


def test_reference_grid_and_penalty_choices():
    data = simulate_grouped(80, 20, 2, rho_within=0.5, n_true=3, amplitude=5.0, rng=np.random.default_rng(1))
    X, y = standardize(data.X), data.y
    grid = reference_lambda_grid(X, y)
    assert grid.size == 100 and np.all(np.diff(grid) < 0)
    assert grid[0] == pytest.approx(np.max(np.abs(X.T @ (y - y.mean()))) / 80**1.5)
    assert grid[-1] == pytest.approx(grid[0] * 0.01 ** 0.99)
    lam = choose_penalty(X, y - y.mean(), "reference", random_state=0)
    assert grid[-1] <= lam <= grid[0]
    assert choose_penalty(X, y, 0.2) == 0.2
    with pytest.raises(ValueError, match="penalty must be"):
        choose_penalty(X, y, "bic")
    with pytest.raises(ValueError, match="must be > 0"):
        choose_penalty(X, y, -1.0)


def test_warm_started_lasso_reaches_the_cold_optimum():
    rng = np.random.default_rng(3)
    D = rng.standard_normal((50, 80)) * rng.uniform(0.5, 2, 80)
    y = D[:, :4] @ np.array([1.0, -1, 0.5, 2]) + rng.standard_normal(50)
    cold = _glmnet_like_lasso(D, y, 0.05, 1e-12)
    warm = _glmnet_like_lasso(D, y, 0.05, 1e-12, init=cold + rng.normal(0, 0.1, 80))
    np.testing.assert_allclose(warm, cold, atol=1e-7)


def test_the_default_fit_is_the_lasso_on_the_standardised_design():
    data = simulate_grouped(200, 12, 3, rho_within=0.5, n_true=3, amplitude=5.0, rng=np.random.default_rng(4))
    est = GroupGaussianMirror(data.groups, random_state=5).fit(data.X, data.y)
    assert est.fit_ == "lasso" and est.alpha_ > 0
    # standardisation: rescaling and shifting columns leaves the statistics unchanged
    scale = np.random.default_rng(6).uniform(0.1, 10, data.X.shape[1])
    moved = GroupGaussianMirror(data.groups, random_state=5).fit(data.X * scale + 7.0, data.y + 3.0)
    np.testing.assert_allclose(moved.statistics_, est.statistics_, rtol=1e-6, atol=1e-8)
    ols = GroupGaussianMirror(data.groups, regression="ols", random_state=5).fit(data.X, data.y)
    ols_moved = GroupGaussianMirror(data.groups, regression="ols", random_state=5).fit(data.X * scale + 7.0, data.y)
    np.testing.assert_allclose(ols_moved.statistics_, ols.statistics_, rtol=1e-8, atol=1e-10)
