"""MPPI and CEM approach the closed-form optimum of a linear-quadratic problem; prior-seeded MPPI
keeps a good prior sample; the DDPM prior reproduces a planted bimodal action distribution."""

import numpy as np
import pytest
import torch

from repro.rl.diffusion_prior import DiffusionConfig, fit_action_diffusion
from repro.rl.planners import cem, mppi, refine_from_prior
from repro.seeding import torch_generator

A = torch.tensor([[1.0, 0.1], [0.0, 1.0]])  # double integrator
B = torch.tensor([[0.0], [0.5]])
H = 10
X0 = torch.tensor([1.0, 0.0])
R = 1.0


def lq_cost(u: torch.Tensor) -> torch.Tensor:
    """sum_t |x_{t+1}|^2 + R u_t^2 for u (..., H, 1) from X0."""
    x = X0.expand(*u.shape[:-2], 2)
    cost = torch.zeros(u.shape[:-2])
    for t in range(H):
        x = x @ A.T + u[..., t, :] @ B.T
        cost = cost + (x**2).sum(-1) + R * (u[..., t, :] ** 2).sum(-1)
    return cost


def lq_optimum() -> tuple[torch.Tensor, float]:
    """Closed form: the cost is quadratic in the stacked u, so u* solves (G^T G + R I) u = -G^T c."""
    G = torch.zeros(2 * H, H)
    c = torch.zeros(2 * H)
    x = X0.clone()
    for t in range(H):
        x = A @ x
        c[2 * t:2 * t + 2] = x
        for k in range(t + 1):
            G[2 * t:2 * t + 2, k] = (torch.linalg.matrix_power(A, t - k) @ B)[:, 0]
    u = torch.linalg.solve(G.T @ G + R * torch.eye(H), -G.T @ c)
    return u.reshape(H, 1), float(lq_cost(u.reshape(1, H, 1))[0])


def test_optimum_lies_inside_the_action_box():
    u, _ = lq_optimum()
    assert u.abs().max() < 1.0  # else the box would change the optimum


@pytest.mark.parametrize("planner", ["mppi", "cem"])
def test_planner_approaches_lq_optimum(planner):
    u_star, j_star = lq_optimum()
    j_zero = float(lq_cost(torch.zeros(1, H, 1))[0])
    score = lambda u: -lq_cost(u)
    gen = torch_generator(0)
    mean = torch.zeros(1, H, 1)
    if planner == "mppi":
        best, n = mppi(score, mean, sigma=0.1, n_samples=256, iterations=40, temperature=0.05, generator=gen)
    else:
        best, n = cem(score, mean, sigma=0.5, n_samples=256, iterations=40, elite_frac=0.1, generator=gen, min_std=1e-3)
    gap = float(lq_cost(best)[0]) - j_star
    assert n == 256 * 40
    assert -1e-4 < gap < 0.02 * (j_zero - j_star)  # closes 98% of the gap from u = 0
    assert torch.allclose(best[0], u_star, atol=0.1)


def test_refine_keeps_the_best_prior_sample():
    u_star, j_star = lq_optimum()
    j_zero = float(lq_cost(torch.zeros(1, H, 1))[0])
    gen = torch_generator(1)
    cand = torch.rand((1, 32, H, 1), generator=gen) * 2 - 1
    cand[0, 7] = u_star  # one proposal is already optimal
    best, n = refine_from_prior(lambda u: -lq_cost(u), cand, sigma=0.3, iterations=3, temperature=0.01, generator=gen)
    assert n == 96
    assert float(lq_cost(best)[0]) - j_star < 0.02 * (j_zero - j_star)


def test_diffusion_prior_samples_both_planted_modes():
    """c < 0.5: the sequence is +0.6 or -0.6 (each half); c >= 0.5: always +0.6 (noise sd 0.05).

    With 400 samples per condition the binomial sd of a share near 1/2 is 0.025; the checks allow
    0.15 (six sd) for sampling plus the fit's own error.
    """
    rng = np.random.default_rng(0)
    c = rng.uniform(0, 1, 4000)
    sign = np.where(c < 0.5, rng.choice([-1.0, 1.0], 4000), 1.0)
    x0 = sign[:, None] * 0.6 + 0.05 * rng.standard_normal((4000, 4))
    prior = fit_action_diffusion(torch.tensor(x0, dtype=torch.float32), torch.tensor(c[:, None], dtype=torch.float32),
                                 DiffusionConfig(steps=20, hidden=128, layers=3, train_steps=3000), seed=0)
    s = prior.sample(torch.tensor([[0.25], [0.75]]), 400, torch_generator(0)).mean(-1).numpy()  # (2, 400)
    near_mode = np.minimum(np.abs(s - 0.6), np.abs(s + 0.6)) < 0.2
    assert near_mode.mean() > 0.9
    assert 0.35 < (s[0] > 0).mean() < 0.65  # both modes where both were planted
    assert (s[1] > 0).mean() > 0.9  # one mode where one was planted


def test_bad_planner_input_is_refused():
    gen = torch_generator(0)
    with pytest.raises(ValueError, match="shape"):
        mppi(lambda u: u.sum((-1, -2)), torch.zeros(H, 1), sigma=0.1, n_samples=8, iterations=1, temperature=1.0,
             generator=gen)
    with pytest.raises(ValueError, match="elite_frac"):
        cem(lambda u: u.sum((-1, -2)), torch.zeros(1, H, 1), sigma=0.1, n_samples=8, iterations=1, elite_frac=0.0,
            generator=gen)
