"""SOCM (repro.methods.distill.mdadd): the Gram form equals the textbook second-moment formula."""

import numpy as np
import pytest
import torch

from repro.methods.distill.mdadd import (measure_moment_cost, second_moment_gap, second_moment_gap_gram,
                                         second_moment_gap_naive, socm_loss, socm_loss_naive)


def _random(n, m, kx, kt, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, kx, generator=g, dtype=torch.float64), torch.randn(n, kt, generator=g, dtype=torch.float64),
            torch.randn(m, kx, generator=g, dtype=torch.float64), torch.randn(m, kt, generator=g, dtype=torch.float64))


def _by_hand(A, B, C, D):
    """Sum over (i, j) of (mean_r a_i b_j - mean_s c_i d_j)^2, with explicit loops over entries."""
    A, B, C, D = (x.numpy() for x in (A, B, C, D))
    total = 0.0
    for i in range(A.shape[1]):
        for j in range(B.shape[1]):
            total += (np.mean(A[:, i] * B[:, j]) - np.mean(C[:, i] * D[:, j])) ** 2
    return total


@pytest.mark.parametrize("n,m,kx,kt", [(7, 5, 3, 4), (40, 12, 30, 9), (3, 50, 64, 64)])
def test_gram_form_equals_naive_second_moment(n, m, kx, kt):
    A, B, C, D = _random(n, m, kx, kt, seed=n + m)
    gram = float(second_moment_gap_gram(A, B, C, D))
    naive = float(second_moment_gap_naive(A, B, C, D))
    hand = _by_hand(A, B, C, D)
    # float64: both are exact up to round-off; 1e-5 relative is the bar set for SOCM
    assert gram == pytest.approx(hand, rel=1e-5, abs=1e-8)
    assert naive == pytest.approx(hand, rel=1e-5, abs=1e-8)


def test_gradients_of_both_forms_agree():
    A, B, C, D = _random(20, 8, 16, 12, seed=3)
    grads = []
    for fn in (second_moment_gap_gram, second_moment_gap_naive):
        c, d = C.clone().requires_grad_(True), D.clone().requires_grad_(True)
        fn(A, B, c, d).backward()
        grads.append((c.grad, d.grad))
    torch.testing.assert_close(grads[0][0], grads[1][0], rtol=1e-5, atol=1e-10)
    torch.testing.assert_close(grads[0][1], grads[1][1], rtol=1e-5, atol=1e-10)


def test_float32_gram_form_within_1e5_of_naive():
    A, B, C, D = (x.float() for x in _random(256, 100, 512, 384, seed=5))
    gram, naive = float(second_moment_gap_gram(A, B, C, D)), float(second_moment_gap_naive(A, B, C, D))
    # float32 cancellation in rr - 2 rs + ss: relative error ~ eps * (rr + ss) / gap ~ 1e-7 * O(1) here
    assert abs(gram - naive) / naive < 1e-5


def test_socm_is_zero_for_identical_sets_and_includes_means():
    A, B, _, _ = _random(30, 1, 6, 5, seed=7)
    assert float(socm_loss(A, B, A.clone(), B.clone())) == pytest.approx(0.0, abs=1e-12)
    # shifting the synthetic images by a constant changes the mean term by exactly ||shift||^2 (+ moment term)
    shift = torch.full((6,), 0.5, dtype=torch.float64)
    with_moment = float(socm_loss(A, B, A + shift, B))
    mean_only = float(socm_loss(A, B, A + shift, B, lam=0.0))
    assert mean_only == pytest.approx(float((shift**2).sum()), rel=1e-12)
    assert with_moment > mean_only
    assert float(socm_loss_naive(A, B, A + shift, B)) == pytest.approx(with_moment, rel=1e-10)


def test_auto_mode_and_bad_mode():
    A, B, C, D = _random(10, 4, 200, 200, seed=9)
    assert float(second_moment_gap(A, B, C, D, "auto")) == pytest.approx(float(second_moment_gap_naive(A, B, C, D)), rel=1e-10)
    with pytest.raises(ValueError, match="gram or naive"):
        second_moment_gap(A, B, C, D, "fast")


def test_cost_measurement_reports_equal_values_and_quadratic_memory():
    rows = measure_moment_cost([8, 32], n_real=16, n_syn=4, reps=1, seed=0)
    mem = {(r["dim"], r["form"]): r["memory_bytes"] for r in rows}
    assert mem[(32, "naive")] == 16 * mem[(8, "naive")]  # d^2
    assert mem[(32, "socm")] == mem[(8, "socm")]  # independent of d
    assert max(r["rel_diff"] for r in rows) < 1e-5
