"""Curvature estimators against exact Hessians; regularisers against closed forms."""

import numpy as np
import pytest
import torch

from repro.methods.immunization.curvature import condition_number, exact_hessian, extremal_eigenvalues, hvp
from repro.methods.immunization.regularizers import plateau, r_ill, r_well


def _mlp_loss(seed: int, d_in: int = 4, hidden: int = 5, n: int = 30):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_in, generator=g, dtype=torch.float64)
    y = torch.randn(n, generator=g, dtype=torch.float64)
    n1 = d_in * hidden

    def loss(p):
        w1 = p[:n1].reshape(d_in, hidden)
        w2 = p[n1:n1 + hidden]
        return ((torch.tanh(x @ w1) @ w2 - y) ** 2).mean()

    params = torch.randn(n1 + hidden, generator=g, dtype=torch.float64)
    return loss, params


@pytest.mark.parametrize("seed", [0, 1])
def test_hvp_matches_exact_hessian(seed):
    loss, p = _mlp_loss(seed)
    H = exact_hessian(loss, p)
    v = torch.randn(p.shape, generator=torch.Generator().manual_seed(9), dtype=p.dtype)
    assert torch.allclose(hvp(loss, p, v), H @ v, atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_lanczos_extremal_match_exact(seed):
    loss, p = _mlp_loss(seed)
    ev = np.linalg.eigvalsh(exact_hessian(loss, p).numpy())
    lo, hi = extremal_eigenvalues(loss, p, n_iter=p.numel())
    assert hi == pytest.approx(ev[-1], rel=1e-6)
    assert lo == pytest.approx(ev[0], rel=1e-6, abs=1e-9)


def test_linear_probe_hessian_is_feature_covariance():
    g = torch.Generator().manual_seed(3)
    z = torch.randn(50, 6, generator=g, dtype=torch.float64) * torch.tensor([1, 1, 1, 1, 1, 0.01], dtype=torch.float64)
    y = torch.randn(50, generator=g, dtype=torch.float64)
    loss = lambda w: 0.5 * ((z @ w - y) ** 2).mean()  # noqa: E731
    eigs = extremal_eigenvalues(loss, torch.zeros(6, dtype=torch.float64), n_iter=6)
    ev = np.linalg.eigvalsh((z.T @ z / 50).numpy())
    assert condition_number(eigs) == pytest.approx(ev[-1] / ev[0], rel=1e-6)


def test_r_well_zero_iff_perfectly_conditioned_and_bounds_kappa():
    q, _ = torch.linalg.qr(torch.randn(20, 4, dtype=torch.float64))
    assert float(r_well(3.0 * q)) == pytest.approx(0.0, abs=1e-10)
    m = q @ torch.diag(torch.tensor([5.0, 2.0, 1.0, 0.5], dtype=torch.float64))
    s = torch.linalg.svdvals(m)
    kappa2 = float(s[0] / s[-1]) ** 2
    assert float(r_well(m)) > 0
    assert kappa2 == pytest.approx((2 * float(r_well(m)) + float((s ** 2).mean())) / float(s[-1]) ** 2)
    # gradient of R_well is sigma_max u v^T - M / p (the reference's S1 gradient)
    mm = m.clone().requires_grad_(True)
    r_well(mm).backward()
    u, sv, vh = torch.linalg.svd(m, full_matrices=False)
    assert torch.allclose(mm.grad, sv[0] * torch.outer(u[:, 0], vh[0]) - m / 4, atol=1e-10)


def test_r_ill_small_for_ill_conditioned():
    q, _ = torch.linalg.qr(torch.randn(20, 3, dtype=torch.float64))
    mild = q @ torch.diag(torch.tensor([1.0, 1.0, 0.9], dtype=torch.float64))
    bad = q @ torch.diag(torch.tensor([1.0, 1.0, 1e-3], dtype=torch.float64))
    assert float(r_ill(bad)) < float(r_ill(mild))
    assert float(r_ill(bad)) == pytest.approx(1 / (0.5 * (2 + 1e-6) / 3 - 0.5e-6))


def test_plateau_zero_gradient_at_flat_point_and_bad_input():
    z = torch.zeros(10, 3, dtype=torch.float64)  # features carry nothing: gradient is exactly 0
    y = torch.zeros(10, dtype=torch.long)
    g = torch.Generator().manual_seed(0)
    assert float(plateau(z, y, torch.zeros(3, 2, dtype=torch.float64), radius=1.0, n_samples=4, generator=g)) == 0.0
    with pytest.raises(ValueError, match="radius"):
        plateau(z, y, torch.zeros(3, 2, dtype=torch.float64), radius=-1.0, n_samples=1, generator=g)
    with pytest.raises(ValueError, match="tall"):
        r_well(torch.zeros(2, 5))
