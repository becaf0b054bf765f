"""collapse's neural part: Lanczos and Gauss-Newton against exact matrices, planted mixture weights and
cluster death, the DDPM's forward marginals, the distributional oracles, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import yaml

from repro.io import read_json, write_json
from repro.papers.collapse import grid
from repro.papers.collapse.experiment import run_recursion, summarise
from repro.papers.collapse.figures import fig4_table, table1
from repro.nn.generative import DDPM, VAE, VaDE, forward_marginal, train_classifier
from repro.papers.collapse.neural import (NeuralConfig, _change, _class_stats, auc, check_pool, draw_real, neural_generations_table,
                                          prediction_auc, prepare_pool, run_neural, summarise_neural, train)
from repro.stats.loss_geometry import LossGeometry, effective_rank
from tests.conftest import REPO


def _flat_hessian(geo: LossGeometry) -> np.ndarray:
    return torch.autograd.functional.hessian(geo.loss, geo.w0).double().numpy()


@pytest.mark.parametrize("make", [lambda: VAE(6, 4, 2), lambda: DDPM(6, 5, 10)])
def test_lanczos_top_hessian_matches_exact_hessian(make):
    torch.manual_seed(0)
    model = make()
    x = torch.rand(16, 6)
    geo = LossGeometry(model, x, model.noise(x, torch.Generator().manual_seed(1)))
    exact = np.linalg.eigvalsh(_flat_hessian(geo))[::-1]
    got = geo.top_hessian(k=3, n_iter=geo.dim, seed=0)  # a full Krylov space: Ritz values are exact
    np.testing.assert_allclose(got, exact[:3], rtol=1e-3, atol=1e-4)


def test_decoder_curvature_is_the_trace_of_the_decoder_hessian_block():
    """Hutchinson against the exact trace of H restricted to the decoder, per decoder parameter.

    Tolerance from sampling error: a Rademacher probe's v^T H_dd v has variance 2 (||H_dd||_F^2 - Σ diag²),
    so the mean of P probes is within 4 standard errors of the exact trace.
    """
    torch.manual_seed(0)
    model = VAE(4, 3, 2)
    x = torch.rand(12, 4)
    geo = LossGeometry(model, x, model.noise(x, torch.Generator().manual_seed(4)))
    m = geo.decoder_mask.bool().numpy()
    h = _flat_hessian(geo)[np.ix_(m, m)]
    probes = 2000
    sd = math.sqrt(2 * ((h ** 2).sum() - (np.diag(h) ** 2).sum()) / probes) / m.sum()
    got = geo.decoder_trace(probes, seed=0)
    assert got == pytest.approx(np.trace(h) / m.sum(), abs=4 * sd)
    assert m.sum() == sum(p.numel() for n, p in model.named_parameters() if n.startswith("dec."))


def test_gauss_newton_matches_explicit_jacobian():
    torch.manual_seed(0)
    model = VAE(5, 3, 2)
    x = torch.rand(8, 5)
    noise = model.noise(x, torch.Generator().manual_seed(2))
    geo = LossGeometry(model, x, noise)
    out = lambda w: geo._call(w, "gn_outputs", x, noise).reshape(-1)
    J = torch.autograd.functional.jacobian(out, geo.w0).double().numpy()
    h = model.output_hessian(x, noise).detach().reshape(-1).double().numpy()
    exact = np.linalg.eigvalsh(J.T @ (h[:, None] * J))[::-1]
    got = geo.gauss_newton_top(k=4, seed=0)
    np.testing.assert_allclose(got, exact[:4], rtol=1e-3, atol=1e-5)
    # the GN matrix is the Hessian's positive part of the output term: it is PSD with rank <= outputs
    assert exact.min() > -1e-6 and (exact > 1e-8 * exact[0]).sum() <= J.shape[0]


def test_dead_cluster_leaves_exactly_its_mean_directions_null():
    """Planted death: a cluster with prior weight ~0 takes no responsibility, so the loss is flat in its mean."""
    torch.manual_seed(0)
    model = VaDE(6, 8, 3, clusters=3)
    with torch.no_grad():
        model.mu_c.copy_(torch.tensor([[2.0, 0, 0], [-2.0, 0, 0], [0, 2.0, 0]]))
    model.prior_on = True
    x = torch.rand(40, 6)
    noise = model.noise(x, torch.Generator().manual_seed(3))
    names = dict(model.named_parameters())

    def hessian_in_means():
        f = lambda mu: torch.func.functional_call(model, {**names, "mu_c": mu}, (x, noise))
        h = torch.func.hessian(f)(model.mu_c.detach()).reshape(9, 9).detach().double().numpy()
        ev = np.abs(np.linalg.eigvalsh(h))
        return int((ev < 1e-7 * ev.max()).sum()), model.cluster_curvature(x, noise)

    null_alive, curv_alive = hessian_in_means()
    with torch.no_grad():
        model.pi_logits[2] = -60.0  # planted: weight e^-60, i.e. dead
    null_dead, curv_dead = hessian_in_means()
    assert null_dead - null_alive == 3  # the latent dimension Z = 3: the known amount
    assert abs(curv_alive[2]) > 1e-4 and abs(curv_dead[2]) < 1e-10 * np.abs(curv_dead[:2]).max()


def test_vade_recovers_planted_mixture_weights():
    """Separable synthetic data: four binary prototypes with planted weights; the fitted prior's weights match.

    (With a 2-d latent and 16 hidden units the joint training merged two prototypes' clusters and the
    weights missed by 0.05: VaDE's known cluster merging; the latent and width here are still far
    below the preset's 8 and 128.)
    """
    rng = np.random.default_rng(0)
    planted = np.array([0.45, 0.3, 0.15, 0.1])
    protos = np.zeros((4, 16), np.float32)
    for k in range(4):
        protos[k, 4 * k: 4 * k + 4] = 1
    y = rng.choice(4, size=600, p=planted)
    x = torch.as_tensor(np.clip(protos[y] + 0.05 * rng.standard_normal((600, 16)), 0, 1).astype(np.float32))
    torch.manual_seed(0)
    cfg = NeuralConfig(digits=[0, 1, 2, 3], class_weights=list(planted), batch=64)
    model = VaDE(16, 32, 4, clusters=4)
    gen = torch.Generator().manual_seed(0)
    train(model, x, 300, cfg, gen)
    model.init_prior(x, seed=0)
    train(model, x, 300, cfg, gen)
    got = np.sort(model.weights().detach().numpy())
    np.testing.assert_allclose(got, np.sort(np.bincount(y) / 600), atol=0.03)


def test_ddpm_forward_marginal_matches_the_chain_of_one_step_kernels():
    model = DDPM(4, 8, 50)
    x0 = torch.full((20000, 4), 0.75)  # images in [0, 1]: x_0 = 2 * 0.75 - 1 = 0.5
    g = torch.Generator().manual_seed(0)
    for t in (0, 9, 49):
        scale, var = forward_marginal(model.alpha_bar, t)
        xt = x0 * 2 - 1
        for s in range(t + 1):  # q(x_s | x_{s-1}) = N(√(1-β_s) x_{s-1}, β_s)
            b = model.betas[s]
            xt = (1 - b).sqrt() * xt + b.sqrt() * torch.randn(xt.shape, generator=g)
        assert float(xt.mean()) == pytest.approx(0.5 * scale, abs=0.01)
        assert float(xt.var()) == pytest.approx(var, abs=0.01 + 0.02 * var)
        closed, _ = model.noised(x0, (torch.full((len(x0),), t), torch.randn(x0.shape, generator=g)))
        assert float(closed.mean()) == pytest.approx(0.5 * scale, abs=0.01)
        assert float(closed.var()) == pytest.approx(var, abs=0.01 + 0.02 * var)


def test_effective_rank_and_auc_closed_forms():
    assert effective_rank(np.ones(7)) == pytest.approx(7)
    assert effective_rank([5.0, 0, 0]) == pytest.approx(1)
    assert auc([3, 2, 1, 0], [1, 1, 0, 0]) == 1.0 and auc([0, 1], [1, 0]) == 0.0 and auc([1, 1], [1, 0]) == 0.5
    assert math.isnan(auc([1, 2], [0, 0]))
    # planted: cluster 0's weight (and curvature, proportional to it) decays to extinction; the others stay
    w = np.array([[0.2, 0.4, 0.4], [0.05, 0.45, 0.5], [0.01, 0.5, 0.49]])
    auc_c, auc_w, lost = prediction_auc(w, 3 * w, floor=0.02)
    assert auc_c == 1.0 and auc_w == 1.0 and lost == 1
    auc_c, _, _ = prediction_auc(w, 1 / w, floor=0.02)  # a predictor pointing the wrong way
    assert auc_c == 0.0


@pytest.fixture(scope="module")
def mnist_pool():
    from repro.data.mnist5k import load_mnist_5k

    im = load_mnist_5k()
    cfg = NeuralConfig()
    return cfg, *prepare_pool(im.x, im.y, im.classes, cfg)


def test_class_metrics_ceiling_and_floor_oracles(mnist_pool):
    """Ceiling: real images drawn at the planted weights; floor: a model collapsed onto one class."""
    cfg, px, py = mnist_pool
    assert px.shape[1] == 14 * 14 and set(np.unique(py)) == set(range(5))
    clf = train_classifier(torch.as_tensor(px), torch.as_tensor(py), 5, 200, seed=0)
    real = torch.as_tensor(draw_real(px, py, cfg.class_weights, 500, np.random.default_rng(1)))
    ceiling = _class_stats(real, clf, cfg)
    floor = _class_stats(torch.as_tensor(px[py == 0][:300]), clf, cfg)
    assert ceiling["class_tv"] < 0.08 and ceiling["digits_lost"] == 0
    assert floor["class_tv"] > 0.65 and floor["digits_lost"] == 4  # 1 - 0.3 = 0.7 when every image is a 0


def test_run_is_deterministic_and_summarises(mnist_pool):
    cfg, px, py = mnist_pool
    tiny = dict(n=60, generations=2, steps_first=20, steps_per_generation=5, ddpm_steps=5, diag_batch=16, hessian_k=2,
                lanczos_iter=4, gn_k=2, hutchinson_probes=1, llc_steps=10, llc_burn_in=2, classifier_steps=10,
                eval_images=20, diagnose_every=2)
    runs = []
    for model, fractions in (("vade", (0.0, 1.0)), ("ddpm", (0.0, 0.5))):  # VaDE at 1: no model samples drawn
        for inject in fractions:
            r = run_neural(tiny, model, inject=inject, seed=7, pool_x=px, pool_y=py)
            r["seed_index"] = 0
            runs.append(r)
    again = run_neural(tiny, "vade", inject=0.0, seed=7, pool_x=px, pool_y=py)
    assert again["generations"] == runs[0]["generations"]
    g = runs[0]["generations"]
    assert [x["generation"] for x in g] == [0, 1, 2] and "llc" in g[0] and "llc" not in g[1]
    assert len(g[1]["cluster_weights"]) == 5 and sum(g[1]["cluster_weights"]) == pytest.approx(1, abs=1e-5)
    metrics = summarise_neural(runs)
    assert metrics["ddpm"]["injected_fraction"] == 0.5 and "loss_auc_curvature" in metrics["vade"]["synthetic_only"]
    assert metrics["vade"]["injected_fraction"] is None and "llc_change" in metrics["vade"]["fresh_only"]


def test_change_needs_both_ends_measured():
    """A failed LLC chain at generation 0 (nan) must not turn a later generation into the baseline."""
    gens = [{"llc": math.nan}, {"llc": 5.0}, {"llc": 3.0}]
    assert math.isnan(_change(gens, "llc"))
    assert _change([{"llc": 4.0}, {}, {"llc": 3.0}], "llc") == -1.0
    assert math.isnan(_change([{"llc": 4.0}, {"llc": 3.0}, {}], "llc"))


def test_bad_input_is_named():
    cfg = NeuralConfig()
    x, y = np.zeros((4, 28, 28, 1), np.float32), np.array([0, 1, 2, 3])
    with pytest.raises(ValueError, match="digits"):
        prepare_pool(x, y, ["0", "1", "2", "3"], cfg)
    with pytest.raises(ValueError, match="multiple of side"):
        prepare_pool(np.zeros((4, 27, 27), np.float32), y, [str(i) for i in range(5)], cfg)
    with pytest.raises(ValueError, match="class_weights"):
        NeuralConfig(class_weights=[0.5, 0.2, 0.1, 0.1, 0.05])
    with pytest.raises(ValueError, match="must start with 0"):
        grid.neural_targets({"neural": {"models": ["vae"], "injections": [0.4], "seeds": 1}})
    with pytest.raises(ValueError, match="neural.remote"):
        grid.neural_data_config({"neural": {"models": ["vae"], "injections": [0.0], "seeds": 1}}, "remote")
    with pytest.raises(ValueError, match="neural block"):
        fig4_table(neural_generations_table([]))
    with pytest.raises(ValueError, match="unknown model"):
        run_neural({}, "gan", inject=0.0, seed=0, pool_x=np.zeros((10, 196), np.float32), pool_y=np.zeros(10, int))


def _fake_run(model: str, inject: float, seed: int, llc: list[float], gn: list[float]) -> dict:
    gens = [{"generation": g, "class_tv": 0.1, "digits_lost": 0, "pixel_std": 0.2} for g in range(5)]
    for g, v, r in zip((0, 2, 4), llc, gn):
        gens[g].update(llc=v, gn_erank=r, feature_erank=3.0, decoder_curvature=1.0)
    return {"model": model, "inject": inject, "seed_index": seed, "config": {"cluster_floor": 0.02}, "generations": gens}


def test_summary_separates_the_fresh_only_control_and_the_llc_trend():
    """Arms 0, 0.4 and 1: 'injected' is 0.4 (the largest below 1), 'fresh_only' is 1. Worked by hand: LLC 10, 9, 8 at
    generations 0, 2, 4 has slope -1/2, a trend change of -2 over the horizon 4 and, over the line's LLC(0) = 10, a
    relative trend of -0.2; LLC 10, 11, 9 has slope -1/4 (centred g -2, 0, 2 against v - 10 = 0, 1, -1), change -1,
    line at 0 = 10.5, relative -1 / 10.5."""
    runs = []
    for s in range(6):
        runs.append(_fake_run("vae", 0.0, s, [10.0, 9.0, 8.0], [5.0, 4.0, 3.0]))
        runs.append(_fake_run("vae", 0.4, s, [10.0, 11.0, 9.0], [5.0, 5.0, 5.0]))
        runs.append(_fake_run("vae", 1.0, s, [10.0, 10.0, 9.5 + 0.1 * s], [5.0, 5.5, 6.0]))
    node = summarise_neural(runs)["vae"]
    assert node["injected_fraction"] == 0.4 and set(node) >= {"synthetic_only", "injected", "fresh_only"}
    assert node["synthetic_only"]["llc_trend_change"]["values"] == pytest.approx([-2.0] * 6)
    assert node["synthetic_only"]["llc_trend_rel"]["values"] == pytest.approx([-0.2] * 6)
    assert node["injected"]["llc_trend_rel"]["values"] == pytest.approx([-1 / 10.5] * 6)
    assert node["fresh_only"]["llc_change"]["values"] == pytest.approx([-0.5 + 0.1 * s for s in range(6)])
    assert node["fresh_only"]["gn_erank_change"]["values"] == pytest.approx([1.0] * 6)
    long = fig4_table(neural_generations_table(runs))
    assert set(zip(long.arm, long.inject)) == {("synthetic only", 0.0), ("injection", 0.4), ("fresh only", 1.0)}


def test_a_failed_diagnostic_read_back_from_its_json_is_missing_not_a_crash(tmp_path):
    """A diagnostic that failed in a job (an LLC chain that diverged: nan) is written to the job's JSON as null; the
    aggregate reads it back as a missing value: that seed drops out of the change, the others are kept."""
    runs = [_fake_run("vae", 0.0, s, [10.0, 9.0, math.nan if s == 0 else 8.0], [5.0, 4.0, 3.0]) for s in range(7)]
    runs[1]["generations"][4]["class_tv"] = math.nan
    runs[2]["generations"][2]["hessian_top"] = [math.nan, 1.0]
    write_json(tmp_path / "runs.json", runs)
    back = read_json(tmp_path / "runs.json")
    assert back[0]["generations"][4]["llc"] is None  # what the aggregate gets
    node = summarise_neural(back)["vae"]["synthetic_only"]
    assert node["llc_change"]["ids"] == [str(s) for s in range(1, 7)] and node["llc_change"]["values"] == pytest.approx([-2.0] * 6)
    assert node["llc_trend_change"]["values"] == pytest.approx([-1.0] + [-2.0] * 6)  # seed 0: generations 0 and 2
    assert len(node["class_tv_final"]["values"]) == 6
    table = neural_generations_table(back)
    # 35 rows: the LLC is measured at generations 0, 2, 4 and failed once; no run measured the Hessian but one, which failed
    assert table["llc"].isna().sum() == 7 * 2 + 1 and table["hessian_max"].isna().all()


def test_table1_of_a_neural_grid_without_a_fraction_between_0_and_1(tmp_path):
    """Fractions [0, 1] (the schema allows them: synthetic only and the fresh-data-only control): there is no
    injected arm and metrics.json holds injected_fraction null; Table 1 lists the two arms there are (it formatted
    the missing fraction and failed). LLC 10, 9, 8 and 10, 10, 9.5 at generations 0, 2, 4: changes -2 and -0.5."""
    runs = [_fake_run("vae", inject, s, [10.0, 9.0, 8.0] if inject == 0 else [10.0, 10.0, 9.5], [5.0, 4.0, 3.0])
            for inject in (0.0, 1.0) for s in range(6)]
    mixture = [run_recursion({"weights": [0.5, 0.5], "n": 50, "generations": 2}, inject=0.0, replicate=0, seed=1,
                             diagnosed=False)]
    metrics, _ = summarise(mixture)
    metrics["neural"] = summarise_neural(runs)
    write_json(tmp_path / "metrics.json", metrics)
    back = read_json(tmp_path / "metrics.json")
    assert back["neural"]["vae"]["injected_fraction"] is None
    table = table1(back).set_index("quantity")
    neural = [q for q in table.index if q.startswith("neural vae: ")]
    assert {q.rsplit(", ", 1)[1] for q in neural} == {"synthetic only", "fresh data only (fraction 1)"}
    assert table.loc["neural vae: LLC(G) - LLC(0), synthetic only", "estimate"] == pytest.approx(-2.0)
    assert table.loc["neural vae: LLC(G) - LLC(0), fresh data only (fraction 1)", "estimate"] == pytest.approx(-0.5)


def test_a_draw_the_pool_cannot_supply_is_refused_before_training():
    # the embedded digits hold 500 of each: n = 2,000 asks ~600 of digit 0 (weight 0.3), which drawing without
    # replacement cannot give; refused up front with the largest n that fits, not hours into a paper-scale run
    pool_y = np.repeat(np.arange(5), 500)
    weights = NeuralConfig().class_weights
    with pytest.raises(ValueError, match=r"n = 2000 .* class 0 .* at most 1382"):
        check_pool(pool_y, weights, 2000)
    check_pool(pool_y, weights, 1382)
    rng = np.random.default_rng(0)
    for _ in range(200):  # the margin (5 s.d.) leaves the draw itself nothing to refuse
        draw_real(np.zeros((len(pool_y), 1)), pool_y, weights, 1382, rng)


def test_every_preset_draws_what_the_embedded_digits_supply():
    presets = yaml.safe_load((REPO / "workflow/presets/collapse.yaml").read_text())["collapse"]
    pool_y = np.repeat(np.arange(5), 500)
    for scale in ("smoke", "small", "paper"):
        neural = presets[scale]["neural"]
        check_pool(pool_y, neural.get("class_weights", NeuralConfig().class_weights), neural["n"], f"collapse.{scale}.neural")
