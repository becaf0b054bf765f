"""The grokking method (repro.methods.grokking): planted power laws, crossings, thresholds and capacity;
memorisation; the model."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from repro.methods.grokking import (GrokConfig, GrokTransformer, bits_memorised, capacity_fit, count_parameters,
                                    crossing_point, fit_power_law, grokking_threshold, power_law_crossing,
                                    train_run)
from repro.papers.grokcap.synth import random_sequences


def _planted(a, b, sigma, seed, reps=8):
    rng = np.random.default_rng(seed)
    P = np.repeat(np.geomspace(1e3, 1e6, 7), reps)
    return P, a * P**b * np.exp(rng.normal(0, sigma, len(P)))


@pytest.mark.parametrize("a, b", [(5e4, -0.8), (20.0, 0.3)])
def test_power_law_fit_recovers_planted_parameters(a, b):
    P, T = _planted(a, b, sigma=0.1, seed=1)
    fit = fit_power_law(P, T)
    # 56 points over 3 decades with log-noise 0.1: se(b) = 0.1 / sqrt(sum (log P - mean)^2) = 0.0066;
    # 4 se covers the estimate with probability > 0.9999
    assert fit["b_se"] == pytest.approx(0.0066, rel=0.3)
    assert abs(fit["b"] - b) < 4 * fit["b_se"]
    assert fit["b_lo"] < b < fit["b_hi"]
    assert abs(math.log(fit["a"] / a)) < 4 * 0.1 * math.sqrt(np.mean(np.log(P) ** 2) / np.sum((np.log(P) - np.log(P).mean()) ** 2))
    assert fit["sigma"] == pytest.approx(0.1, rel=0.25)  # chi^2 with 54 dof: sd of s/sigma is about 0.1


def test_censored_fit_recovers_slope_that_the_cap_would_bias():
    a, b, sigma = 5e4, -0.8, 0.3
    P, T = _planted(a, b, sigma, seed=2, reps=20)
    cap = 40.0  # censors the slow small models (T(1e3) = 200, T(1e4) = 32): about a third of the runs
    cens = T > cap
    assert 0.2 < cens.mean() < 0.5
    observed = np.minimum(T, cap)
    fit = fit_power_law(P, observed, cens)
    naive = fit_power_law(P, observed)  # treats T = cap as a measurement
    assert fit["n_censored"] == cens.sum()
    # Tobit MLE: unbiased up to sampling error (se about 0.014 here; 4 se); the naive slope is flattened
    assert abs(fit["b"] - b) < 4 * fit["b_se"] < 0.1
    assert abs(naive["b"] - b) > 3 * abs(fit["b"] - b) and naive["b"] > b


def test_fit_needs_two_uncensored_sizes_and_positive_values():
    fit = fit_power_law([1e3, 1e4], [10.0, 10.0], [False, True])
    assert math.isnan(fit["b"])
    with pytest.raises(ValueError, match="positive"):
        fit_power_law([1e3, 0.0], [1.0, 2.0])


def test_crossing_of_planted_power_laws_is_exact():
    # T1 = 1e6 P^-1 and T2 = 1e3 P^-0.25 meet where P^0.75 = 1e3, i.e. P = 1e4; both are straight
    # lines in log-log, so linear interpolation there is exact whatever the grid
    P = np.geomspace(150, 2e6, 9)
    T1, T2 = 1e6 * P**-1.0, 1e3 * P**-0.25
    assert crossing_point(P, T1, T2) == pytest.approx(1e4, rel=1e-9)
    assert crossing_point(P, T2, T1) == pytest.approx(1e4, rel=1e-9)
    f1, f2 = fit_power_law(P, T1), fit_power_law(P, T2)
    assert power_law_crossing(f1, f2) == pytest.approx(1e4, rel=1e-6)
    assert math.isnan(crossing_point(P, T1 * 1e-6, T2))  # T1 below T2 everywhere: no crossing
    with pytest.raises(ValueError, match="increasing"):
        crossing_point(P[::-1], T1, T2)


def test_crossing_from_noisy_curves_lands_near_planted_point():
    P, T1 = _planted(1e6, -1.0, 0.05, seed=3)
    _, T2 = _planted(1e3, -0.25, 0.05, seed=4)
    f1, f2 = fit_power_law(P, T1), fit_power_law(P, T2)
    # log P* = (log a2 - log a1) / (b1 - b2); with se(b) ~ 0.003 and se(log a) ~ 0.03 the error in
    # log10 P* stays well below 0.1
    assert abs(math.log10(power_law_crossing(f1, f2)) - 4.0) < 0.1


def test_grokking_threshold_on_planted_fractions():
    P = np.array([1e3, 2e3, 4e3, 8e3, 16e3])
    thr = grokking_threshold(P, [0.0, 0.2, 1.0, 0.67, 1.0])
    assert thr["first_P"] == 4e3 and thr["P"] == pytest.approx(math.sqrt(2e3 * 4e3))
    # a grokking island below a non-grokking width does not count
    assert grokking_threshold(P, [1.0, 0.0, 1.0, 1.0, 1.0])["first_P"] == 4e3
    assert grokking_threshold(P, [1.0] * 5)["at_grid_edge"] == 1
    assert math.isnan(grokking_threshold(P, [0, 0, 1, 1, 0])["P"])


def test_capacity_fit_recovers_planted_bits_per_parameter():
    rng = np.random.default_rng(5)
    P = np.repeat([1e3, 3e3, 1e4, 3e4], 5)
    bits = 2.16 * P + rng.normal(0, 200, len(P))
    fit = capacity_fit(P, bits)
    # se = 200 / sqrt(sum P^2) = 0.0042; the 95% t-interval covers 2.16 unless a 1-in-20 draw
    assert fit["lo"] < 2.16 < fit["hi"] and fit["hi"] - fit["lo"] < 0.05
    assert abs(fit["intercept"]) < 4 * 200


def test_bits_memorised_closed_forms():
    y = torch.tensor([0, 3, 1, 2])
    assert bits_memorised(torch.zeros(4, 8), y, 8) == pytest.approx(0.0, abs=1e-9)  # uniform: nothing stored
    sure = torch.full((4, 8), -50.0)
    sure[torch.arange(4), y] = 50.0
    assert bits_memorised(sure, y, 8) == pytest.approx(4 * 3.0, abs=1e-9)  # every label: log2 8 bits


@pytest.mark.parametrize("width, depth, heads", [(8, 2, 1), (12, 1, 3), (32, 3, 4)])
def test_parameter_count_closed_form_of_our_variant(width, depth, heads):
    V = 25
    model = GrokTransformer(V, width, depth, heads, variant="ours")
    # embeddings V d + 4 d; per block qkv 3 d^2, proj d^2, SwiGLU 3 x 4 d^2, two norms 2 d;
    # final norm d; unembedding V d
    expected = V * width + 4 * width + depth * (16 * width**2 + 2 * width) + width + V * width
    assert count_parameters(model) == expected


@pytest.mark.parametrize("variant", ["reference", "ours"])
def test_model_memorises_tiny_random_label_set(variant):
    data = random_sequences(40, 7, seed=0)
    cfg = GrokConfig(variant=variant, p=7, width=32, dropout=0.0, lr=3e-3, max_steps=1500, eval_every=10)
    # the random-label task stops once train accuracy reaches 99% (the capacity task, under the
    # reference rule, trains on to a loss plateau); labels over all 9 tokens, as the reference's
    out = train_run(cfg, "random", data.x, data.y, n_tokens=data.n_tokens, n_classes=data.n_tokens, seed=0)
    # 40 labels over 9 tokens carry 127 bits; 26,000 parameters hold far more: every label is learned
    assert out["train_acc"] == 1.0 and out["t_train"] is not None and out["steps"] < 1500
    assert 0 < out["bits"] <= out["dataset_bits"] == pytest.approx(40 * math.log2(9))


@pytest.mark.parametrize("variant, task", [("reference", "random"), ("ours", "random"), ("reference", "capacity")])
def test_training_is_deterministic_and_leaves_global_rng_alone(variant, task):
    data = random_sequences(30, 7, seed=1)
    cfg = GrokConfig(variant=variant, p=7, width=8, dropout=0.1, capacity_dropout=0.1, max_steps=30,
                     capacity_max_steps=30, eval_every=10, batch_size=8)
    state = torch.random.get_rng_state()
    a = train_run(cfg, task, data.x, data.y, n_tokens=data.n_tokens, seed=3)
    assert torch.equal(state, torch.random.get_rng_state())
    b = train_run(cfg, task, data.x, data.y, n_tokens=data.n_tokens, seed=3)
    def trace(run):
        return [(c["step"], c["train_acc"], c["train_loss"]) for c in run["curve"]]

    assert trace(a) == trace(b) and a["bits"] == b["bits"]


def test_train_run_rejects_unknown_task_and_missing_validation():
    data = random_sequences(10, 7, seed=0)
    with pytest.raises(ValueError, match="task"):
        train_run(GrokConfig(p=7, width=8), "lookup", data.x, data.y, n_tokens=data.n_tokens, seed=0)
    with pytest.raises(ValueError, match="validation"):
        train_run(GrokConfig(p=7, width=8), "modular", data.x, data.y, n_tokens=data.n_tokens, seed=0)
