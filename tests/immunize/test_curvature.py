"""Curvature estimators against exact Hessians; regularisers against closed forms."""

import numpy as np
import pytest
import torch

from repro.methods.immunization.curvature import (
    condition_number,
    exact_hessian,
    extremal_eigenvalues,
    extremal_ritz,
    hvp,
)
from repro.methods.immunization.regularizers import EPS, gram_extremal, plateau, r_ill, r_well
from repro.stats.lanczos import lanczos_ritz


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
    loss = lambda w: 0.5 * ((z @ w - y) ** 2).mean()
    eigs = extremal_eigenvalues(loss, torch.zeros(6, dtype=torch.float64), n_iter=6)
    ev = np.linalg.eigvalsh((z.T @ z / 50).numpy())
    assert condition_number(eigs) == pytest.approx(ev[-1] / ev[0], rel=1e-6)


def _diag_phi(d, n: int = 12) -> torch.Tensor:
    """Phi = [diag(d); 0] (n x p): singular values d, Gram matrix S = diag(d^2)."""
    d = torch.as_tensor(d, dtype=torch.float64)
    return torch.cat([torch.diag(d), torch.zeros(n - len(d), len(d), dtype=torch.float64)])


def test_r_well_r_ill_closed_form_on_a_diagonal_phi():
    # S = Phi^T Phi = diag(lam), lam = d^2: r1 = (lam_max + EPS)^2 / 2 - sum lam^2 / (2p), r2 = 1 / (sum lam^2 / (2p)
    # - (lam_min + EPS)^2 / 2); in Phi: d r1 / d Phi_ii = 2 (lam_max + EPS) d_max [i = max] - 2 d_i^3 / p and
    # d r2 / d Phi_ii = -(2 d_i^3 / p - 2 (lam_min + EPS) d_min [i = min]) r2^2, zero off the diagonal.
    d = torch.tensor([3.0, 2.0, 1.5, 0.5], dtype=torch.float64)
    lam, p = d ** 2, 4
    phi = _diag_phi(d).requires_grad_(True)
    r1 = r_well(phi)
    assert float(r1) == pytest.approx(float((lam[0] + EPS) ** 2 / 2 - (lam ** 2).sum() / (2 * p)), rel=1e-12)
    g1, = torch.autograd.grad(r1, phi)
    want = -2 * d ** 3 / p
    want[0] += 2 * (lam[0] + EPS) * d[0]
    assert torch.allclose(g1, _diag_phi(want), atol=1e-9)
    r2 = r_ill(phi)
    denom = (lam ** 2).sum() / (2 * p) - (lam[-1] + EPS) ** 2 / 2
    assert float(r2) == pytest.approx(float(1 / denom), rel=1e-12)
    g2, = torch.autograd.grad(r2, phi)
    dd = 2 * d ** 3 / p
    dd[-1] -= 2 * (lam[-1] + EPS) * d[-1]
    assert torch.allclose(g2, _diag_phi(-dd / denom ** 2), atol=1e-12)
    # on the Gram matrix, not on Phi: the singular values enter squared (the reference's S, not sigma)
    assert float(r1) != pytest.approx(float(d[0] ** 2 / 2 - (d ** 2).sum() / (2 * p)), rel=0.1)


def test_r_well_zero_at_kappa_one_and_bounds_kappa():
    q, _ = torch.linalg.qr(torch.randn(20, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1)))
    assert float(r_well(3.0 * q)) == pytest.approx(9 * EPS, abs=1e-9)  # lambda = 9: only the EPS shift is left
    m = q @ torch.diag(torch.tensor([5.0, 2.0, 1.0, 0.5], dtype=torch.float64))
    lam = torch.linalg.svdvals(m) ** 2  # eigenvalues of the probe Hessian's S = M^T M
    assert float((lam[0] / lam[-1]) ** 2) == pytest.approx(
        float(2 * r_well(m) + (lam ** 2).mean()) / float(lam[-1]) ** 2, rel=1e-6)


def test_r_well_r_ill_agree_with_the_reference_on_a_random_matrix():
    # The reference's training loss (models/model.py reg_loss) on S = Phi^T Phi, K = p, written out from its
    # definition, and its S1_gradients (the gradient of r1 in S: lambda_max v v^T - S / p), mapped to Phi by
    # the chain rule d/dPhi = 2 Phi d/dS (S symmetric): both must equal ours on a random Phi.
    g = torch.Generator().manual_seed(4)
    phi = torch.randn(40, 6, dtype=torch.float64, generator=g) @ torch.diag(
        torch.tensor([4.0, 2.0, 1.5, 1.0, 0.7, 0.2], dtype=torch.float64))
    s = phi.T @ phi
    ev = torch.linalg.eigvalsh(s + 1e-6 * torch.eye(6, dtype=torch.float64))
    k = phi.shape[1]
    ref_r1 = ev.max() ** 2 / 2 - torch.norm(s, p="fro") ** 2 / (2 * k)
    ref_r2 = 1 / (torch.norm(s, p="fro") ** 2 / (2 * k) - ev[ev > 1e-6].min() ** 2 / 2)
    assert float(r_well(phi)) == pytest.approx(float(ref_r1), rel=1e-10)
    assert float(r_ill(phi)) == pytest.approx(float(ref_r2), rel=1e-10)
    u, sig, vh = torch.linalg.svd(s)
    grad_s = sig[0] * torch.outer(u[:, 0], vh[0]) - s / k  # S1_gradients(S)
    pp = phi.clone().requires_grad_(True)
    r_well(pp).backward()
    assert torch.allclose(pp.grad, 2 * phi @ grad_s, rtol=1e-6, atol=1e-6)
    # r2's gradient in S: (lambda_min v v^T - S / p) / denominator^2 (the direction of S2_gradients)
    v = torch.linalg.eigh(s)[1][:, 0]
    grad_s2 = (ev[0] * torch.outer(v, v) - s / k) * float(ref_r2) ** 2
    pp = phi.clone().requires_grad_(True)
    r_ill(pp).backward()
    assert torch.allclose(pp.grad, 2 * phi @ grad_s2, rtol=1e-6, atol=1e-12)


def test_r_ill_small_for_ill_conditioned_and_skips_a_null_space():
    q, _ = torch.linalg.qr(torch.randn(20, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2)))
    mild = q @ torch.diag(torch.tensor([1.0, 1.0, 0.9], dtype=torch.float64))
    bad = q @ torch.diag(torch.tensor([1.0, 1.0, 1e-2], dtype=torch.float64))
    assert float(r_ill(bad)) < float(r_ill(mild))
    assert float(r_ill(bad)) == pytest.approx(1 / ((2 + 1e-8) / 6 - (1e-4 + EPS) ** 2 / 2), rel=1e-9)
    # a zero column (rank deficient, as the reference's 64-sample batches of 784 features): lambda_min is the
    # smallest eigenvalue above EPS, not the null space's
    rank2 = q @ torch.diag(torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64))
    assert float(r_ill(rank2)) == pytest.approx(1 / ((16 + 1) / 6 - (1 + EPS) ** 2 / 2), rel=1e-9)


def test_plateau_zero_gradient_at_flat_point_and_bad_input():
    z = torch.zeros(10, 3, dtype=torch.float64)  # features carry nothing: gradient is exactly 0
    y = torch.zeros(10, dtype=torch.long)
    g = torch.Generator().manual_seed(0)
    assert float(plateau(z, y, torch.zeros(3, 2, dtype=torch.float64), radius=1.0, n_samples=4, generator=g)) == 0.0
    with pytest.raises(ValueError, match="radius"):
        plateau(z, y, torch.zeros(3, 2, dtype=torch.float64), radius=-1.0, n_samples=1, generator=g)
    with pytest.raises(ValueError, match="tall"):
        r_well(torch.zeros(2, 5))


def test_lanczos_ritz_one_step_is_the_start_vectors_rayleigh_quotient_and_a_full_run_is_exact():
    # worked by hand: one step from q (standard normal from the seed, normalised) gives T = [q^T A q], the
    # Ritz pair (q^T A q, q); dim steps span R^dim, so the Ritz pairs are A's eigenpairs
    a = np.diag([1.0, 2.0, 4.0])
    q = np.random.default_rng(7).standard_normal(3)
    q /= np.linalg.norm(q)
    ritz, vecs = lanczos_ritz(lambda v: a @ v, 3, n_iter=1, seed=7)
    assert ritz[0] == pytest.approx(q @ a @ q, rel=1e-14) and np.allclose(abs(vecs[0] @ q), 1.0)
    ritz, vecs = lanczos_ritz(lambda v: a @ v, 3, n_iter=3, seed=7)
    assert np.allclose(ritz, [1.0, 2.0, 4.0], rtol=1e-12)
    assert np.allclose(abs(vecs), np.eye(3), atol=1e-8)  # eigenvectors e_1, e_2, e_3, up to sign


def test_defence_product_is_the_probe_hessians_hvp():
    # the closed-form product the defence's estimator uses, M^T (M v), is the Hessian-vector product of
    # w -> ||M w||^2 / 2 (Hessian S = M^T M), the one the timing figure takes by autodiff
    g = torch.Generator().manual_seed(5)
    m = torch.randn(30, 5, dtype=torch.float64, generator=g)
    v = torch.randn(5, dtype=torch.float64, generator=g)
    loss = lambda w: 0.5 * ((m @ w) ** 2).sum()
    assert torch.allclose(hvp(loss, torch.zeros(5, dtype=torch.float64), v), m.T @ (m @ v), atol=1e-12)
    (lo, _), (hi, _) = extremal_ritz(lambda x: m.T @ (m @ x), 5, n_iter=5)
    ev = np.linalg.eigvalsh((m.T @ m).numpy())
    assert (lo, hi) == (pytest.approx(ev[0], rel=1e-10), pytest.approx(ev[-1], rel=1e-10))


def test_lanczos_terms_equal_the_closed_form_on_a_diagonal_phi():
    # S = diag(d^2): the estimator spanning the space (n_iter = p) gives lambda_max + EPS = 9 + EPS and
    # lambda_min + EPS = 0.25 + EPS, so r1 / r2 and their gradients equal the exact form's (worked above)
    d = torch.tensor([3.0, 2.0, 1.5, 0.5], dtype=torch.float64)
    phi = _diag_phi(d)
    lo, hi = gram_extremal(phi, estimator="lanczos", n_iter=4)
    assert float(lo) == pytest.approx(0.25 + EPS, rel=1e-12) and float(hi) == pytest.approx(9.0 + EPS, rel=1e-12)
    for reg in (r_well, r_ill):
        exact = phi.clone().requires_grad_(True)
        est = phi.clone().requires_grad_(True)
        r_e, r_l = reg(exact), reg(est, estimator="lanczos", n_iter=4)
        assert float(r_l) == pytest.approx(float(r_e), rel=1e-12)
        r_e.backward()
        r_l.backward()
        assert torch.allclose(est.grad, exact.grad, atol=1e-10)


def test_lanczos_terms_gradient_on_a_random_phi_and_short_runs_bound_from_inside():
    g = torch.Generator().manual_seed(4)
    phi = torch.randn(40, 6, dtype=torch.float64, generator=g) @ torch.diag(
        torch.tensor([4.0, 2.0, 1.5, 1.0, 0.7, 0.2], dtype=torch.float64))
    for reg in (r_well, r_ill):
        exact, est = phi.clone().requires_grad_(True), phi.clone().requires_grad_(True)
        reg(exact).backward()
        reg(est, estimator="lanczos").backward()  # default n_iter spans the 6 dimensions
        assert torch.allclose(est.grad, exact.grad, rtol=1e-8, atol=1e-10)
    # a short run: Ritz values lie inside the spectrum (Cauchy interlacing), so R_well is under-stated and
    # R_ill over-stated, never the other way round
    lo_e, hi_e = gram_extremal(phi)
    lo, hi = gram_extremal(phi, estimator="lanczos", n_iter=2)
    assert float(lo_e) <= float(lo) <= float(hi) <= float(hi_e)
    assert float(r_well(phi, estimator="lanczos", n_iter=2)) <= float(r_well(phi))
    assert float(r_ill(phi, estimator="lanczos", n_iter=2)) >= float(r_ill(phi))
    with pytest.raises(ValueError, match="unknown estimator"):
        gram_extremal(phi, estimator="power")


def test_lanczos_lambda_min_does_not_skip_a_null_space():
    # the named deviation: on a rank-deficient S the estimator's lambda_min is the null space's (0 + EPS),
    # where the exact form takes the smallest eigenvalue above EPS
    q, _ = torch.linalg.qr(torch.randn(20, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2)))
    rank2 = q @ torch.diag(torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64))
    lo, _ = gram_extremal(rank2, estimator="lanczos")
    assert float(lo) == pytest.approx(EPS, abs=1e-12)
    assert float(gram_extremal(rank2)[0]) == pytest.approx(1.0 + EPS, rel=1e-12)
