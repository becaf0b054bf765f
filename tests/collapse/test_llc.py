"""The SGLD local learning coefficient (repro.stats.llc) against closed forms, and Lanczos against eigh.

Tolerances: a chain's draws of nβ(L - L*) on a quadratic are sums of ½χ²₁ terms (variance ½ each),
autocorrelated over about 1/(ε a) steps (a = nβh + γ, the slowest direction ~146 here, ε = 1e-4,
so ~70 steps); 2 x 40,000 steps give ~1,100 effective draws per direction, a standard error of
~0.02 per direction and ~0.05 for the sum over 4. The tolerance 0.2 is four of those, and still
less than half a regular direction (0.5), the quantity the LLC counts.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.stats.lanczos import lanczos_eigenvalues
from repro.stats.llc import quadratic_llc, sgld_llc, wbic_beta

N = 1000
STEP = 1e-4


def ula_quadratic_llc(h, n, gamma, step):
    """Exact stationary mean of nβ(L - L*) under the discretised Langevin chain on ½ Σ h w².

    The chain w' = (1 - εa/2) w + sqrt(ε) ξ (a = nβh + γ) has stationary variance 1 / (a (1 - εa/4)).
    """
    nb = n * wbic_beta(n)
    a = nb * np.asarray(h) + gamma
    return float(np.sum(0.5 * nb * np.asarray(h) / (a * (1 - step * a / 4))))


def test_regular_quadratic_gives_half_the_dimension():
    h = np.array([1.0, 2.0, 5.0, 10.0])
    est = sgld_llc(lambda w: (0.5 * np.sum(h * w ** 2), h * w), np.zeros(4), N, gamma=1.0, step=STEP,
                   n_steps=40_000, burn_in=2_000, n_chains=2, seed=3)
    exact = ula_quadratic_llc(h, N, 1.0, STEP)
    assert est.llc == pytest.approx(exact, abs=0.2)
    # the Laplace prediction of a regular model is d/2, up to the localisation (γ / nβh, below 1%)
    assert quadratic_llc(h, N, gamma=1.0) == pytest.approx(2.0, abs=0.02)
    assert abs(exact - 2.0) < 0.1


def test_quartic_direction_counts_a_quarter():
    """L = ½ w1² + w2⁴ has RLCT ½ + ¼: E[a|w|^p] = 1/p under a density ∝ exp(-a|w|^p) (γ = 0)."""
    def loss_grad(w):
        return 0.5 * w[0] ** 2 + w[1] ** 4, np.array([w[0], 4 * w[1] ** 3])
    est = sgld_llc(loss_grad, np.zeros(2), N, gamma=0.0, step=STEP, n_steps=60_000, burn_in=2_000, n_chains=2, seed=4)
    assert est.llc == pytest.approx(0.75, abs=0.1)
    assert est.llc < 1.0 - 0.1  # not the regular value


def test_flat_direction_counts_nothing():
    """A direction the loss does not see contributes 0 (only the localisation holds it)."""
    h = np.array([3.0, 0.0])
    est = sgld_llc(lambda w: (0.5 * np.sum(h * w ** 2), h * w), np.zeros(2), N, gamma=1.0, step=STEP,
                   n_steps=20_000, burn_in=1_000, n_chains=2, seed=5)
    assert est.llc == pytest.approx(0.5, abs=0.1)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="burn_in"):
        sgld_llc(lambda w: (0.0, w), np.zeros(1), 10, n_steps=10, burn_in=10)
    with pytest.raises(ValueError, match="n >= 2"):
        wbic_beta(1)
    with pytest.raises(ValueError, match="left the model's domain"):
        sgld_llc(lambda w: (np.inf, w), np.zeros(1), 10, n_steps=10, burn_in=1)


def test_lanczos_matches_eigh_on_a_hessian_product():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((60, 60))
    H = A @ A.T / 60 + np.diag(np.r_[[50.0, 30.0, 20.0], np.zeros(57)])
    top = lanczos_eigenvalues(lambda v: H @ v, 60, k=3, n_iter=40, seed=1)
    assert np.allclose(top, np.linalg.eigvalsh(H)[::-1][:3], rtol=1e-8)
    # an operator of rank 2 is exhausted after 2 steps: the Ritz values are then exact
    B = np.outer([1.0, 2, 0, 0], [1.0, 2, 0, 0]) + np.outer([0, 0, 1.0, 0], [0, 0, 1.0, 0])
    assert np.allclose(lanczos_eigenvalues(lambda v: B @ v, 4, k=2), [5.0, 1.0])
