"""Planted case: the harmful task lives in input directions of its own, the benign task in others, so a
linear extractor can be conditioned (and flattened) on the harmful task alone. Each defence must move
its own training signal the way it is built to, keep the benign features' scale, and ``none`` must
change nothing; the adversary must learn a separable task and not learn from empty features."""

import numpy as np
import pytest
import torch

from repro.methods.immunization.regularizers import plateau
from repro.methods.immunization.train import adversary, booster_drop, immunize


def _kappa(z):
    ev = np.linalg.eigvalsh((z.T @ z / z.shape[0]).numpy())
    return ev[-1] / ev[0]


@pytest.fixture(scope="module")
def planted():
    g = torch.Generator().manual_seed(0)
    d, k, n = 8, 4, 200
    xh = torch.randn(n, d, generator=g, dtype=torch.float64)
    xh[:, :4] *= 3.0  # harmful task lives mostly in the first 4 input directions
    xb = torch.randn(n, d, generator=g, dtype=torch.float64)
    xb[:, 4:] *= 3.0  # benign task mostly in the last 4: conditioning them apart is possible
    yh = (xh[:, 0] > 0).long()
    theta0 = torch.linalg.qr(torch.randn(d, k, generator=g, dtype=torch.float64))[0]
    return xh, yh, xb, theta0


def test_none_changes_nothing(planted):
    xh, yh, xb, theta0 = planted
    theta, seconds = immunize(xh, yh, xb, theta0, method="none", steps=50, lr=0.01)
    assert torch.equal(theta, theta0) and seconds == 0.0


def test_condition_number_baseline_conditions_as_planted(planted):
    xh, yh, xb, theta0 = planted
    theta, _ = immunize(xh, yh, xb, theta0, method="condnum", steps=300, lr=0.01, w_task=0.0)
    # the direction the regularisers push, with a margin ("raises", not "by how much")
    assert _kappa(xh @ theta) > 3 * _kappa(xh @ theta0)
    assert _kappa(xb @ theta) < _kappa(xb @ theta0) * 1.5
    assert float((xb @ theta).norm()) == pytest.approx(float((xb @ theta0).norm()), rel=1e-9)  # benign scale kept


def test_ours_flattens_the_harmful_start_and_booster_blunts_the_first_step(planted):
    xh, yh, xb, theta0 = planted
    w0 = torch.zeros(theta0.shape[1], 2, dtype=torch.float64)

    def plat(th):
        return float(plateau(xh @ th, yh, w0, radius=0.1, n_samples=8, generator=torch.Generator().manual_seed(5)))

    ours, _ = immunize(xh, yh, xb, theta0, method="ours", steps=200, lr=0.01, w_task=0.0)
    cond, _ = immunize(xh, yh, xb, theta0, method="condnum", steps=200, lr=0.01, w_task=0.0)
    assert plat(ours) < 0.5 * plat(theta0) and plat(ours) < plat(cond)
    boost, _ = immunize(xh, yh, xb, theta0, method="booster", steps=200, lr=0.01, w_task=0.0)
    assert float(booster_drop(xh @ boost, yh, w0, 1.0)) < 0.5 * float(booster_drop(xh @ theta0, yh, w0, 1.0))


def test_adversary_learns_separable_task_and_nothing_from_empty_features():
    g = torch.Generator().manual_seed(1)
    z = torch.randn(200, 3, generator=g, dtype=torch.float64)
    y = (z[:, 0] > 0).long()
    for opt, lr in (("sgd", 1.0), ("adam", 0.1)):
        accs = adversary(z, y, z, y, optimizer=opt, lr=lr, checkpoints=[0, 100])
        assert accs[0] == pytest.approx(float((y == 0).double().mean()))  # zero probe: argmax is class 0
        assert accs[1] > 0.95
    empty = torch.zeros_like(z)
    assert adversary(empty, y, empty, y, optimizer="adam", lr=0.1, checkpoints=[100])[0] == \
        pytest.approx(float((y == 0).double().mean()))


def test_bad_input(planted):
    xh, yh, xb, theta0 = planted
    with pytest.raises(ValueError, match="optimizer"):
        adversary(xh @ theta0, yh, xh @ theta0, yh, optimizer="rmsprop", lr=0.1, checkpoints=[1])
    with pytest.raises(ValueError, match="checkpoints"):
        adversary(xh @ theta0, yh, xh @ theta0, yh, optimizer="sgd", lr=0.1, checkpoints=[5, 1])
    with pytest.raises(ValueError, match="steps"):
        immunize(xh, yh, xb, theta0, method="condnum", steps=-1, lr=0.1)
    with pytest.raises(ValueError, match="unknown defence 'vaccine'"):
        immunize(xh, yh, xb, theta0, method="vaccine", steps=1, lr=0.1)


def test_full_fine_tuning_adversary_trains_the_extractor_and_stalls_at_the_zero_saddle(planted):
    xh, yh, _, theta0 = planted
    chance = float((yh == 0).double().mean())
    accs = adversary(xh, yh, xh, yh, optimizer="adam", lr=0.05, checkpoints=[0, 200], theta=theta0)
    assert accs[0] == pytest.approx(chance) and accs[1] > 0.95
    # theta = 0 and w = 0: every gradient is exactly zero, so no optimiser moves (a planted flat start)
    stuck = adversary(xh, yh, xh, yh, optimizer="adam", lr=0.05, checkpoints=[200], theta=torch.zeros_like(theta0))
    assert stuck[0] == pytest.approx(chance)


def test_objective_weighs_each_curvature_term_by_its_release_value(planted):
    # R_well and R_ill (on the feature Gram matrix) are divided by their values at the release: each weighted term
    # equals its weight there, whatever the features' scale (the reference's raw lambdas are in its data's units)
    from repro.methods.immunization.extractors import LinearExtractor
    from repro.methods.immunization.regularizers import r_ill
    from repro.methods.immunization.train import Objective

    xh, yh, xb, theta0 = planted
    for scale in (1.0, 10.0):
        th = scale * theta0
        obj = Objective(LinearExtractor(*theta0.shape), th, xh, yh, xb, w_well=2.0, w_ill=3.0)
        zh, zb = xh @ th, xb @ th
        assert float(obj.term("r_well", zh, zb)) == pytest.approx(2.0, rel=1e-10)
        assert float(obj.term("r_ill", zh, zb)) == pytest.approx(3.0, rel=1e-10)
        assert float(obj.term("r_ill", 2 * zh, zb)) == pytest.approx(3.0 * float(r_ill(2 * zh) / r_ill(zh)), rel=1e-10)


def test_estimator_and_exact_curvature_train_the_same_defence(planted):
    # the estimator spans the 4-dimensional feature space (n_iter defaults to min(p, 30)), so its terms, their
    # gradients and the trained extractor equal the exact variant's up to rounding; the per-step check records it
    xh, yh, xb, theta0 = planted
    trace: dict = {}
    est, _ = immunize(xh, yh, xb, theta0, method="condnum", steps=30, lr=0.01, w_task=0.0, trace=trace)
    exact, _ = immunize(xh, yh, xb, theta0, method="condnum", steps=30, lr=0.01, w_task=0.0, curvature="exact")
    assert torch.allclose(est, exact, atol=1e-8)
    assert 0.0 <= trace["estimator_err_max"] < 1e-9
    # two Lanczos steps on a 4-dimensional space: the check sees the estimator's error
    short: dict = {}
    immunize(xh, yh, xb, theta0, method="condnum", steps=3, lr=0.01, w_task=0.0, lanczos_iter=2, trace=short)
    assert short["estimator_err_max"] > 1e-6
    with pytest.raises(ValueError, match="unknown curvature estimator"):
        immunize(xh, yh, xb, theta0, method="condnum", steps=1, lr=0.01, w_task=0.0, curvature="power")
