"""GTP's warm start: the shifted previous plan is one of the N candidates of the first population, scored with the
prior samples at the same N x I model evaluations; the denoiser is called for the N - 1 others."""

import numpy as np
import pytest
import torch

from repro.papers.gtp.experiment import Controller, PlanConfig, gtp_population
from repro.rl.diffusion_prior import ActionDiffusion, DiffusionConfig
from repro.rl.planners import refine_from_prior
from repro.rl.world_model import ModelConfig, WorldModel
from repro.seeding import torch_generator

H, A, S, N, K = 4, 2, 2, 6, 3


def _prior() -> ActionDiffusion:
    torch.manual_seed(0)
    return ActionDiffusion(H * A, S, DiffusionConfig(steps=K, hidden=8, layers=1)).eval()


def test_population_holds_the_previous_plan_first_and_n_minus_one_prior_samples():
    prior, s0 = _prior(), torch.zeros(3, S)
    warm = torch.linspace(-0.9, 0.9, 3 * H * A).reshape(3, H, A)
    cand, drawn = gtp_population(prior, s0, warm, N, torch_generator(0))
    assert cand.shape == (3, N, H, A) and drawn == N - 1
    assert torch.equal(cand[:, 0], warm)  # the plan itself, not a perturbation of it
    # the prior samples are the first N - 1 of the same generator's stream
    assert torch.equal(cand[:, 1:].reshape(3, N - 1, H * A), prior.sample(s0, N - 1, torch_generator(0)))
    alone, drawn = gtp_population(prior, s0, None, N, torch_generator(0))
    assert alone.shape == (3, N, H * A) and drawn == N
    with pytest.raises(ValueError, match="does not fit"):
        gtp_population(prior, s0, torch.zeros(3, H + 1, A), N, torch_generator(0))


def test_a_previous_plan_that_is_best_is_what_one_sharp_iteration_returns():
    """Worked by hand: with I = 1 the refined plan is sum_n w_n cand_n, w = softmax(J / (T std J)); the score
    -|a - target|^2 is 0 at the target and at most -|target - prior sample|^2 elsewhere, so as T -> 0 every
    weight but the target's vanishes and the plan is the previous plan itself."""
    prior, s0 = _prior(), torch.zeros(1, S)
    target = torch.full((1, H, A), 0.7)
    score = lambda acts: -((acts - target[:, None]) ** 2).sum((-1, -2))
    for warm, expect_equal in ((target, True), (None, False)):
        cand, _ = gtp_population(prior, s0, warm, N, torch_generator(1))
        best, evals = refine_from_prior(
            score, cand.reshape(1, N, H, A), sigma=0.5, iterations=1, temperature=1e-4, generator=torch_generator(2)
        )
        assert evals == N
        assert torch.allclose(best, target, atol=1e-6) is expect_equal


@pytest.mark.parametrize("warm_start", [True, False])
def test_controller_keeps_its_plan_from_the_second_decision_and_counts_the_denoiser(warm_start):
    """Three decisions: the first has no previous plan (N prior samples, K N denoiser calls), the next two keep it
    (K (N - 1) each) -> K (3N - 2) / 3 per decision; without the warm start K N; model evaluations N I always."""
    torch.manual_seed(0)
    wm = WorldModel(S, A, ModelConfig(members=2, hidden=8)).eval()
    plan = PlanConfig(horizon=H, n_samples=N, iterations=2, warm_start=warm_start)
    act = Controller("gtp", None, wm=wm, prior=_prior(), plan=plan, seed=0, n_problems=2, action_dim=A)
    obs = np.zeros((2, S))
    for _ in range(3):
        a = act(obs)
        assert a.shape == (2, A) and np.all(np.abs(a) <= 1)
    per = act.per_decision()
    assert per["evals_per_decision"] == N * 2
    want = K * (3 * N - 2) / 3 if warm_start else K * N
    assert per["denoiser_per_decision"] == pytest.approx(want)
