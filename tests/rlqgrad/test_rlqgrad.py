"""RLQ-Grad's trainers and measurements (repro.methods.rlqgrad, repro.papers.rlqgrad.experiment)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from repro.config import from_dict
from repro.methods.rlqgrad import (METHODS, RLQGradConfig, build_trainer, load_dataset, rl_state, rlqgrad_agent,
                                   train_qnn)
from repro.papers.rlqgrad.experiment import aggregate, gradient_variance
from repro.rl.ppo import PPOConfig


def _batch(cfg, seed=0, n_classes=3):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(cfg.batch_size, cfg.pca_dim, generator=gen, dtype=cfg.real_dtype),
            torch.randint(n_classes, (cfg.batch_size,), generator=gen))


def test_a_misspelt_model_key_is_refused_with_its_path():
    # the preset's model block becomes the config through the strict converter: nothing is dropped
    cfg = from_dict(RLQGradConfig, {"pca_dim": 8, "hidden": 32}, "rlqgrad.smoke.model", n_qubits=4)
    assert (cfg.pca_dim, cfg.hidden, cfg.n_qubits) == (8, 32, 4)
    with pytest.raises(ValueError, match=r"rlqgrad\.smoke\.model\.update_scal\b.*did you mean 'update_scale'"):
        from_dict(RLQGradConfig, {"update_scal": 0.1}, "rlqgrad.smoke.model")


def test_the_ppo_block_is_converted_and_checked_too():
    cfg = from_dict(RLQGradConfig, {"hidden": 32, "ppo": {"clip": 0.1, "lr": 1e-3}}, "rlqgrad.smoke.model")
    assert cfg.ppo == PPOConfig(clip=0.1, lr=1e-3) and cfg.hidden == 32
    with pytest.raises(ValueError, match=r"rlqgrad\.smoke\.model\.ppo\.clipp\b"):
        from_dict(RLQGradConfig, {"ppo": {"clipp": 0.1}}, "rlqgrad.smoke.model")


def test_registry_holds_the_four_methods():
    assert METHODS.names() == ["adjoint", "backprop", "parameter_shift", "rlqgrad"]
    with pytest.raises(ValueError, match="unknown QNN training method"):
        METHODS.get("spsa")


def test_gradient_trainers_follow_the_same_trajectory():
    # The three exact gradients differ by round-off only (complex128), so three Adam updates from
    # the same initialisation land on the same parameters up to ~1e-12.
    cfg = RLQGradConfig(n_qubits=3, n_layers=2, pca_dim=4, batch_size=8, dtype="complex128", lr_theta=0.1)
    z, y = _batch(cfg)
    params = {}
    for method in ("backprop", "parameter_shift", "adjoint"):
        trainer = build_trainer(method, in_dim=4, n_classes=3, cfg=cfg, total_steps=10, seed=5)
        for _ in range(3):
            trainer.step(z, y)
        params[method] = torch.cat([p.detach().reshape(-1) for p in trainer.model.parameters()])
    for method in ("parameter_shift", "adjoint"):
        np.testing.assert_allclose(params[method], params["backprop"], atol=1e-9)


def test_rlqgrad_moves_theta_only_by_the_proposed_update():
    # theta <- theta - eta g, with g the previous action; FC_in never changes (no circuit derivative).
    cfg = RLQGradConfig(n_qubits=3, n_layers=2, pca_dim=4, batch_size=8, rollout=4, update_scale=0.05)
    trainer = build_trainer("rlqgrad", in_dim=4, n_classes=3, cfg=cfg, total_steps=20, seed=1)
    z, y = _batch(cfg)
    fc_in = trainer.model.fc_in.weight.detach().clone()
    for _ in range(9):  # crosses two PPO optimisations
        theta = trainer.model.theta.detach().clone()
        trainer.step(z, y)
        g = trainer.prev_update.reshape(theta.shape)
        np.testing.assert_allclose(trainer.model.theta.detach(), theta - cfg.update_scale * g, atol=1e-6)
    assert torch.equal(trainer.model.fc_in.weight, fc_in)
    assert not trainer.model.theta.requires_grad
    assert set(trainer.last_stats) == {"pg_loss", "v_loss", "entropy"}


def test_actor_and_critic_are_spectrally_normalised():
    cfg = RLQGradConfig(hidden=32)
    agent = rlqgrad_agent(9, cfg, seed=0)  # s in R^20, g in R^9
    s = torch.randn(20)
    for _ in range(30):  # power iteration converges over forward passes in training mode
        agent.dist(s[None])
        agent.critic(s[None])
    for net in (agent.actor, agent.critic):
        linears = [m for m in net if hasattr(m, "parametrizations")]
        assert len(linears) == 3
        for lin in linears:
            assert torch.linalg.matrix_norm(lin.weight.detach(), ord=2) <= 1.05


def test_rl_state_layout():
    theta = torch.tensor([[[3 * math.pi, -0.5]]], dtype=torch.float64)
    s = rl_state(theta, 0.7, 0.25, torch.tensor([0.1, 0.2]))
    np.testing.assert_allclose(s, [-1.0, -0.5 / math.pi, 0.7, 0.25, 0.1, 0.2], atol=1e-6)


def test_backprop_learns_breast_cancer():
    # Breast cancer is ~95% linearly separable; 4 PCA components through a 4-qubit circuit and an
    # Adam-trained head reach well above the 63% majority class within 150 updates.
    data = load_dataset("breast_cancer", pca_dim=4, seed=0)
    cfg = RLQGradConfig(n_qubits=4, n_layers=1, pca_dim=4, steps=150, batch_size=32, lr_classical=0.02, lr_theta=0.05)
    result = train_qnn("adjoint", data, cfg, seed=0, dataset="breast_cancer")
    assert result["val_accuracy"] > 0.85


def test_training_is_deterministic():
    data = load_dataset("digits", pca_dim=4, seed=0)
    cfg = RLQGradConfig(n_qubits=3, n_layers=1, pca_dim=4, steps=20, batch_size=8, rollout=4)
    a, b = (train_qnn("rlqgrad", data, cfg, seed=7) for _ in range(2))
    assert a["loss_curve"] == b["loss_curve"] and a["val_accuracy"] == b["val_accuracy"]


def test_dataset_errors():
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("mnist", pca_dim=4)
    with pytest.raises(ValueError, match="pca_dim"):
        load_dataset("breast_cancer", pca_dim=31)


def test_exact_methods_give_identical_variance():
    cfg = RLQGradConfig(n_qubits=3, n_layers=2)
    v = [gradient_variance(m, cfg, n_inits=6, seed=4)["mean_variance"] for m in ("backprop", "parameter_shift", "adjoint")]
    np.testing.assert_allclose(v, v[0], rtol=1e-9)


def test_aggregate_recovers_planted_slope_and_ratios():
    variance = [{"method": m, "n_qubits": n, "mean_variance": 10 ** (-0.5 * n + c)}
                for m, c in (("backprop", 0.0), ("rlqgrad", None)) for n in (2, 4, 6) if c is not None]
    variance += [{"method": "rlqgrad", "n_qubits": n, "mean_variance": 0.3} for n in (2, 4, 6)]
    bench = [{"method": "backprop", "n_qubits": 12, "step_s": 2.0, "step_cpu_s": 2.0, "step_peak_mb": 5.0},
             {"method": "rlqgrad", "n_qubits": 12, "step_s": 1.0, "step_cpu_s": 0.5, "step_peak_mb": 1.0,
              "proposal_s": 0.01, "proposal_cpu_s": 0.01, "proposal_peak_mb": 0.1}]
    train = [{"dataset": "digits", "n_qubits": 4, "method": m, "seed": 0, "val_accuracy": a, "s_per_update": 1.0}
             for m, a in (("backprop", 0.8), ("adjoint", 0.9), ("rlqgrad", 0.7))]
    metrics, _ = aggregate(variance, bench, train, {"max_abs_diff": 0.0})
    assert metrics["variance"]["backprop"]["slope_log10_per_qubit"] == pytest.approx(-0.5)
    assert metrics["variance"]["backprop"]["decay_orders"] == pytest.approx(2.0)
    assert metrics["variance"]["rlqgrad"]["abs_slope_log10_per_qubit"] == pytest.approx(0.0, abs=1e-12)
    assert metrics["speedup"]["n12"]["rlqgrad_step_over_backprop"] == pytest.approx(4.0)
    assert metrics["speedup"]["n12"]["rlqgrad_proposal_over_backprop"] == pytest.approx(200.0)
    assert metrics["speedup"]["n12"]["rlqgrad_step_over_backprop_wall"] == pytest.approx(2.0)
    assert metrics["accuracy"]["digits"]["n4"]["best_gradient_method"] == "adjoint"
    assert metrics["accuracy"]["rlqgrad_minus_best_range"]["min"] == pytest.approx(-0.2)
