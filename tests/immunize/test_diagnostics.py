"""The diagnostics of a defence's benign cost on planted cases: known principal angles, closed-form gradients."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from repro.methods.immunization.extractors import make_extractor
from repro.methods.immunization.train import Objective
from repro.papers.immunize.diagnostics import diagnose_unit, span_cos2, term_gradients
from repro.papers.immunize.synth import make_tasks


def _basis(n, k, seed=0):
    return torch.linalg.qr(torch.randn(n, k, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))[0]


def test_span_cos2_recovers_planted_principal_angles():
    q = _basis(50, 4)
    mix = torch.tensor([[2.0, 1.0], [0.5, -1.0]], dtype=torch.float64)  # invertible: the span is unchanged
    z0 = q[:, :2] @ mix
    t = 0.6
    z1 = torch.stack([math.cos(t) * q[:, 0] + math.sin(t) * q[:, 2], q[:, 1]], 1)  # angles t and 0
    assert span_cos2(z0, z1) == pytest.approx((math.cos(t) ** 2 + 1) / 2, abs=1e-12)
    assert span_cos2(z0, q[:, :2]) == pytest.approx(1.0, abs=1e-12)
    assert span_cos2(z0, q[:, 2:]) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="same rows"):
        span_cos2(z0, z0[:10])


def test_task_gradient_matches_the_closed_form_on_a_linear_extractor():
    tasks = make_tasks(0, k=4)
    ext = make_extractor("linear", 64, 4)
    theta = tasks.theta0.reshape(-1)
    x, y = tasks.x_train[:80], tasks.y_train[:80] % 5
    head = torch.randn(4, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    objective = Objective(ext, theta, x, y, x, w_task=2.0, n_samples=2, seed=0)
    g = term_gradients(ext, theta, objective, x, x, y, head, seed=0)
    p = torch.softmax(x @ tasks.theta0 @ head, 1)
    closed = 2.0 * x.T @ (p - F.one_hot(y, 5).to(x.dtype)) @ head.T / len(y)  # d/dTheta of 2 CE(X Theta W, y)
    assert g["task"]["out"] == pytest.approx(float(closed.norm()), rel=1e-10)
    assert all(parts["hid"] == 0.0 for parts in g.values())  # a linear extractor has no hidden layer


def _cfg():
    return {"models": ["linear", "mlp"], "methods": ["none", "scaled"], "release": {"mlp": {"hidden": 8}},
            "immunize": {"radius": 0.1, "n_samples": 2, "head_steps": 30}, "utility": {"steps": 30, "lr": 0.05}}


def test_a_rescaled_output_layer_keeps_the_span_and_moves_only_the_output():
    tasks = make_tasks(0, k=4)
    gen = torch.Generator().manual_seed(0)
    thetas = {"linear/none": tasks.theta0.reshape(-1).numpy()}
    mlp = make_extractor("mlp", 64, 4, hidden=8)
    thetas["mlp/none"] = mlp.init(gen).numpy()
    for model, ext in (("linear", make_extractor("linear", 64, 4)), ("mlp", mlp)):
        th = torch.as_tensor(thetas[f"{model}/none"]).clone()
        ext.rescale_(th, 2.0)  # features doubled: the same span and probe kappa, the output layer moved by 1
        thetas[f"{model}/scaled"] = th.numpy()
    rows = {(r["model"], r["method"]): r for r in diagnose_unit(_cfg(), tasks, thetas, seed=0, train_seed=0)}
    for model in ("linear", "mlp"):
        none, scaled = rows[model, "none"], rows[model, "scaled"]
        assert none["span_cos2"] == pytest.approx(1.0) and scaled["span_cos2"] == pytest.approx(1.0)
        assert none["drift_out"] == 0.0 and scaled["drift_out"] == pytest.approx(1.0)
        assert scaled["drift_hid"] == 0.0
        assert scaled["benign_kappa"] == pytest.approx(none["benign_kappa"], rel=1e-8)
        assert scaled["benign_acc_lstsq"] == none["benign_acc_lstsq"]  # least squares is scale-free
        assert none["rel_task_out"] == none["def_task_out"]  # at the release both points coincide
    assert rows["mlp", "none"]["rel_plateau_hid"] > 0 and rows["linear", "none"]["rel_plateau_hid"] == 0.0


def test_a_unit_without_its_release_is_refused():
    tasks = make_tasks(0, k=4)
    with pytest.raises(ValueError, match="no release"):
        diagnose_unit(_cfg(), tasks, {"linear/scaled": np.zeros(256)}, seed=3, train_seed=0)
