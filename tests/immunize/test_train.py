"""Planted case: harmful and benign features share a linear extractor; immunization must raise the
harmful probe Hessian's condition number, keep the benign one low, (the adversary comparison is the experiment, see the note below)."""

import numpy as np
import pytest
import torch

from repro.methods.immunization.train import adversary, immunize


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


def test_condition_number_baseline_conditions_as_planted(planted):
    xh, yh, xb, theta0 = planted
    theta = immunize(xh, yh, xb, theta0, steps=300, lr=0.01)
    # the direction the regularisers push, with a margin: measured 6.8 -> 34.8 (x5.1); a first
    # guess of x10 failed and was lowered to x3, so this bound says "raises", not "by how much"
    assert _kappa(xh @ theta) > 3 * _kappa(xh @ theta0)
    assert _kappa(xb @ theta) < _kappa(xb @ theta0) * 1.5
    # NOT asserted: on this planted case a 100-step SGD adversary (lr 0.05) is NOT slowed by the
    # baseline (final loss 0.336 immunized vs 0.337 not); the effect on the adversary is the
    # experiment's question (setting ii), not yet built.


def test_bad_input(planted):
    xh, yh, xb, theta0 = planted
    with pytest.raises(ValueError, match="optimizer"):
        adversary(xh @ theta0, yh, optimizer="rmsprop", lr=0.1, steps=1)
    with pytest.raises(ValueError, match="steps"):
        immunize(xh, yh, xb, theta0, steps=-1, lr=0.1)
