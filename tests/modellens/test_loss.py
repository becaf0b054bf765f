"""ModelLens' training loss and optimiser against hand-worked cases from the reference's definitions
(luisrui/ModelLens: module/model/Loss.py JointCriterion of ListwisePointwiseLoss and
PairwisePointwiseLoss; src/main.py AdamW)."""

import math

import numpy as np
import pytest
import torch

import repro.methods.modellens as mlm
from repro.papers.modellens.experiment import build_problem, hashed_text_embedding, texts_of
from repro.papers.modellens.synth import LeaderboardConfig, simulate_leaderboard


def lse(*xs):
    return math.log(sum(math.exp(x) for x in xs))


# two groups padded to three candidates: targets y (standardised values), scores s, pointwise z
Y = torch.tensor([[0.2, 1.0, -1.0], [-1.0, 1.0, 0.0]])
S = torch.tensor([[0.3, -0.5, 0.8], [1.5, 0.4, 9.0]])
Z = torch.tensor([[0.0, 0.5, -1.0], [-2.0, 1.5, 7.0]])
MASK = torch.tensor([[True, True, True], [True, True, False]])


def test_listmle_hand_case():
    # group 1 best first: candidates 1, 0, 2 -> positions [lse(s1, s0, s2) - s1, lse(s0, s2) - s0, 0], mean over 3;
    # group 2 (two candidates; the padded one never counts): 1, 0 -> [lse(s1, s0) - s1, 0], mean over 2
    g1 = (lse(-0.5, 0.3, 0.8) + 0.5 + lse(0.3, 0.8) - 0.3 + 0.0) / 3
    g2 = (lse(0.4, 1.5) - 0.4 + 0.0) / 2
    assert mlm.listmle(S, Y, MASK).item() == pytest.approx((g1 + g2) / 2, rel=1e-6)
    # perfectly separated scores in the right order drive it to 0, and it is not ListNet's cross-entropy
    assert mlm.listmle(100 * Y, Y, torch.ones_like(MASK)).item() == pytest.approx(0.0, abs=1e-6)


def test_pairwise_and_regression_terms_hand_case():
    listwise, list_mse, pairwise, pair_mse = mlm.ranking_losses(S, Z, Y, MASK)
    sq = {(0, 0): 0.04, (0, 1): 0.25, (0, 2): 0.0, (1, 0): 1.0, (1, 1): 0.25}
    # the listwise side's regression: mean over the five real candidates
    assert list_mse.item() == pytest.approx(sum(sq.values()) / 5, rel=1e-6)
    # BPR over every pair (better, worse) within a group: (1,0), (1,2), (0,2) in group 1; (1,0) in group 2
    pairs = [(0, 1, 0), (0, 1, 2), (0, 0, 2), (1, 1, 0)]
    sp = [[0.3, -0.5, 0.8], [1.5, 0.4]]
    bpr = [math.log1p(math.exp(-(sp[g][i] - sp[g][j]))) for g, i, j in pairs]
    assert pairwise.item() == pytest.approx(sum(bpr) / 4, rel=1e-6)
    # the regression on each side of a pair, averaged over the pairs
    assert pair_mse.item() == pytest.approx(sum(sq[g, i] + sq[g, j] for g, i, j in pairs) / 4, rel=1e-6)
    # the reference's JointCriterion: 0.5 (ListMLE + 0.1 MSE) + 1.0 (BPR + 0.1 MSE on each side)
    total = mlm.modellens_loss(S, Z, Y, MASK, mlm.ModelLensConfig())
    expected = 0.5 * (listwise + 0.1 * list_mse) + 1.0 * (pairwise + 0.1 * pair_mse)
    assert total.item() == pytest.approx(expected.item(), rel=1e-6)


@pytest.fixture(scope="module")
def problem():
    lb = simulate_leaderboard(LeaderboardConfig(n_models=30, n_datasets=6), 1)
    emb = hashed_text_embedding(texts_of(lb))
    return build_problem(lb, emb[:30], emb[30:])


def test_optimiser_is_adamw_with_its_default_weight_decay(problem):
    # With use_text=False the card projection's weight has a zero gradient at every step, so Adam's
    # moments stay 0 and only AdamW's decoupled decay moves it: w_k = w_0 (1 - lr wd)^k, wd = 0.01 (the
    # reference's AdamW(params, lr) takes torch's default). Adam with L2 decay would move it by ~lr a step.
    cfg = mlm.ModelLensConfig(steps=3, use_text=False)
    assert cfg.weight_decay == 0.01 and cfg.max_grad_norm == 5.0
    torch.manual_seed(0)
    fresh = mlm.ModelLensNet(
        cfg,
        problem.n_models,
        problem.n_groups,
        int(problem.group_metric.max()) + 1,
        int(problem.model_family.max()) + 1,
        problem.model_text.shape[1],
    )
    trained = mlm.train_modellens(problem, cfg, 0)[0]
    expected = fresh.card.weight * (1 - cfg.lr * cfg.weight_decay) ** 3
    torch.testing.assert_close(trained.card.weight, expected, rtol=1e-6, atol=0)
    assert not torch.allclose(trained.card.bias, fresh.card.bias)  # the bias does get gradients


def test_training_is_deterministic_and_lowers_the_loss(problem):
    cfg = mlm.ModelLensConfig(steps=40)
    a, b = mlm.ModelLens(steps=40).fit_predict(problem, 3), mlm.ModelLens(steps=40).fit_predict(problem, 3)
    np.testing.assert_array_equal(a, b)
    curve = mlm.train_modellens(problem, cfg, 3)[2]
    assert np.isfinite(curve).all() and np.mean(curve[-5:]) < curve[0]


def test_the_gradient_reaching_adamw_is_clipped_to_the_configured_norm(problem, monkeypatch):
    # the reference's JointCriterion clips the global gradient norm before the optimiser step: with a tiny
    # limit every step's gradient arrives at AdamW with norm exactly the limit (torch scales by
    # max / (norm + 1e-6)); with no limit the raw norms, far above it, arrive unchanged
    seen = []
    step = torch.optim.AdamW.step

    def recording_step(self, *args, **kwargs):
        grads = [p.grad for group in self.param_groups for p in group["params"] if p.grad is not None]
        seen.append(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item())
        return step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)
    mlm.train_modellens(problem, mlm.ModelLensConfig(steps=4, max_grad_norm=1e-3), 0)
    assert seen == pytest.approx([1e-3] * 4, rel=1e-3)
    seen.clear()
    mlm.train_modellens(problem, mlm.ModelLensConfig(steps=4, max_grad_norm=math.inf), 0)
    assert len(seen) == 4 and min(seen) > 1e-2
