"""munkey baselines and attacks on cases where their behaviour is known."""

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from repro.methods.unlearning import (
    ShadowAttack,
    UnlearnConfig,
    loss_mia_auc,
    mia_features,
    per_example_loss,
    saliency_mask,
    unlearn,
)


def _blobs(n, seed, flip=0.0):
    gen = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=gen)
    x = torch.randn(n, 2, generator=gen) + 2.0 * (2 * y[:, None] - 1).float()
    if flip:
        y = torch.where(torch.rand(n, generator=gen) < flip, 1 - y, y)
    return x, y


def _fit(model, x, y, steps=300, lr=0.05):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return model.eval()


@pytest.fixture(scope="module")
def logistic():
    torch.manual_seed(0)
    x, y = _blobs(200, 0)
    return _fit(nn.Linear(2, 2), x, y), x, y


def _loss(model, x, y):
    with torch.no_grad():
        return float(F.cross_entropy(model(x), y))


def test_neggrad_raises_the_forget_loss_and_finetune_lowers_the_retain_loss(logistic):
    model, x, y = logistic
    forget, retain = (x[:20], y[:20]), (x[20:], y[20:])
    cfg = UnlearnConfig(epochs=20, lr=0.05, batch_size=20)
    ng = copy.deepcopy(model)
    unlearn("neggrad", ng, retain, forget, cfg, 0, 2)
    assert _loss(ng, *forget) > _loss(model, *forget) + 0.1
    ft = copy.deepcopy(model)
    unlearn("finetune", ft, retain, forget, cfg, 0, 2)
    assert _loss(ft, *retain) <= _loss(model, *retain) + 1e-3


def test_random_labels_moves_forget_predictions_off_their_labels(logistic):
    model, x, y = logistic
    rl = copy.deepcopy(model)
    unlearn("random_labels", rl, (x[20:], y[20:]), (x[:20], y[:20]), UnlearnConfig(epochs=30, lr=0.05), 0, 2)
    with torch.no_grad():  # two classes: the only wrong label is the other one
        assert float((rl(x[:20]).argmax(1) == y[:20]).float().mean()) < 0.5


def test_salun_moves_only_salient_weights():
    torch.manual_seed(1)
    x, y = _blobs(100, 1)
    model = _fit(nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2)), x, y, steps=100)
    masks = saliency_mask(model, x[:10], y[:10], 0.5)
    frac = float(sum(m.sum() for m in masks) / sum(m.numel() for m in masks))
    assert 0.45 <= frac <= 0.55  # the median splits the weights in half
    before = [p.detach().clone() for p in model.parameters()]
    unlearn("salun", model, (x[10:], y[10:]), (x[:10], y[:10]), UnlearnConfig(epochs=3), 0, 2)
    for p0, p1, m in zip(before, model.parameters(), masks):
        assert torch.equal(p0[m == 0], p1.detach()[m == 0])
        assert not torch.equal(p0[m == 1], p1.detach()[m == 1])


def test_scrub_with_no_steps_leaves_the_model_unchanged(logistic):
    model, x, y = logistic
    s = copy.deepcopy(model)
    unlearn("scrub", s, (x[20:], y[20:]), (x[:20], y[:20]), UnlearnConfig(epochs=2, lr=0.0), 0, 2)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), s.parameters()))


def test_loss_mia_auc_closed_forms():
    assert loss_mia_auc(np.array([0.1, 0.2]), np.array([1.0, 2.0])) == 1.0
    assert loss_mia_auc(np.array([3.0]), np.array([1.0])) == 0.0
    assert loss_mia_auc(np.array([1.0, 1.0]), np.array([1.0])) == 0.5


def _overfit(seed):
    """A wide MLP trained to memorise 100 points with 50% random labels: members and non-members separate."""
    torch.manual_seed(seed)
    x_in, y_in = _blobs(100, seed, flip=0.5)
    x_out, y_out = _blobs(100, seed + 100, flip=0.5)
    model = _fit(nn.Sequential(nn.Linear(2, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2)),
                 x_in, y_in, steps=1500, lr=0.01)
    with torch.no_grad():
        return model(x_in), y_in, model(x_out), y_out


def test_attacks_are_chance_on_independent_data_and_high_on_an_overfit_model():
    torch.manual_seed(2)
    model = _fit(nn.Linear(2, 2), *_blobs(200, 3))
    with torch.no_grad():  # neither set was trained on: members and non-members in name only
        (xa, ya), (xb, yb), (xc, yc), (xd, yd) = (_blobs(2000, s) for s in (4, 5, 6, 7))
        la, lb, lc, ld = model(xa), model(xb), model(xc), model(xd)
    assert abs(loss_mia_auc(per_example_loss(la, ya), per_example_loss(lb, yb)) - 0.5) < 0.03
    attack = ShadowAttack(mia_features(lc, yc), mia_features(ld, yd))
    assert abs(attack.auc(mia_features(la, ya), mia_features(lb, yb)) - 0.5) < 0.03

    target_in, y_in, target_out, y_out = _overfit(10)
    assert loss_mia_auc(per_example_loss(target_in, y_in), per_example_loss(target_out, y_out)) > 0.7
    shadow_in, sy_in, shadow_out, sy_out = _overfit(20)  # the shadow: same recipe, disjoint data
    attack = ShadowAttack(mia_features(shadow_in, sy_in), mia_features(shadow_out, sy_out))
    assert attack.auc(mia_features(target_in, y_in), mia_features(target_out, y_out)) > 0.7


def test_attack_and_baseline_bad_input():
    with pytest.raises(ValueError, match="at least one member"):
        loss_mia_auc(np.array([]), np.array([1.0]))
    with pytest.raises(ValueError, match="two shadow members"):
        ShadowAttack(np.zeros((1, 4)), np.zeros((5, 4)))
    with pytest.raises(ValueError, match="unlearning baseline"):
        unlearn("forget_everything", nn.Linear(2, 2), (torch.zeros(2, 2), torch.zeros(2, dtype=torch.long)),
                (torch.zeros(1, 2), torch.zeros(1, dtype=torch.long)), UnlearnConfig(), 0, 2)
    with pytest.raises(ValueError, match="saliency quantile"):
        saliency_mask(nn.Linear(2, 2), torch.zeros(1, 2), torch.zeros(1, dtype=torch.long), 1.0)
