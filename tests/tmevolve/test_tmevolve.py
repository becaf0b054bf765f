"""TMEvolve's defining properties on tiny patch graphs (closed forms, fixed points, invariances)."""

import dataclasses

import numpy as np
import pytest
import torch

from repro.methods.mil import MIL_MODELS, MeanMIL, SlideBag, create_mil_model
from repro.methods.tmevolve import TMEvolve, TMEvolveConfig, farthest_point_seeds
from repro.nn.graph import DenseEdges, SparseEdges, grid_neighbours

D, DIM, M = 12, 16, 5


def grid_bag(h=5, w=6, seed=0, features=None, drop=()):
    """A bag on an h x w grid (step 224), optionally with holes (patches dropped)."""
    xy = np.array([(x, y) for y in range(h) for x in range(w) if (x, y) not in drop])
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(len(xy), D)).astype(np.float32) if features is None else features
    return SlideBag.from_arrays(x, xy * 224, 224, patch_types=(xy[:, 0] >= w // 2).astype(np.int16))


def model(seed=0, **over):
    torch.manual_seed(seed)
    cfg = TMEvolveConfig(dim=DIM, attn_hidden=8, dropout=0.0, K=3, Q=2, **over)
    emb = np.random.default_rng(1).normal(size=(M, 24))
    return TMEvolve(D, 4, cfg, emb).eval()


@pytest.fixture(params=["dense", "sparse"])
def edges_kind(request):
    return request.param


def edges_for(bag, kind):
    return DenseEdges(bag.nbr8) if kind == "dense" else SparseEdges(bag.nbr8)


def test_grid_neighbours_of_a_corner_and_an_interior_patch():
    g = np.array([(x, y) for y in range(3) for x in range(3)])
    nbr = grid_neighbours(g)
    assert sorted(nbr[4][nbr[4] >= 0]) == [0, 1, 2, 3, 5, 6, 7, 8]    # centre sees all 8
    assert sorted(nbr[0][nbr[0] >= 0]) == [1, 3, 4]                   # corner sees 3


def test_off_grid_coordinates_are_an_error():
    with pytest.raises(ValueError, match="grid of step 224"):
        SlideBag.from_arrays(np.zeros((2, 3), np.float32), np.array([[0, 0], [100, 0]]), 224)


def test_forward_gives_finite_outputs_and_a_nonnegative_balance_loss():
    out = model()(grid_bag())
    assert out["out"].shape == (4,) and torch.isfinite(out["out"]).all()
    assert out["S"].shape == (30, 3)
    assert float(out["aux_loss"].detach()) >= 0


def test_gradients_reach_every_parameter():
    m = model().train()
    out = m(grid_bag())
    (out["out"].sum() + out["aux_loss"]).backward()
    missing = [n for n, p in m.named_parameters() if p.grad is None or not torch.any(p.grad != 0)]
    assert missing == []


def test_q0_k1_is_mean_pooling():
    bag = grid_bag()
    tm = TMEvolve(D, 4, dataclasses.replace(model().cfg, Q=0, K=1), np.ones((M, 24)))
    mean = MeanMIL(D, 4, dim=DIM, dropout=0.0)
    mean.fc.load_state_dict(tm.fc.state_dict())
    mean.head.load_state_dict(tm.head.state_dict())
    tm.eval(), mean.eval()
    out = tm(bag)
    assert torch.allclose(out["S"], torch.ones_like(out["S"]))        # one region holding every patch
    assert torch.allclose(out["out"], mean(bag)["out"], atol=1e-6)


def test_s_rows_sum_to_one_before_and_after_evolution():
    out = model()(grid_bag(), trace=True)
    for S in out["trace"]["S"]:
        assert torch.allclose(S.sum(1), torch.ones(S.shape[0]), atol=1e-5)


def test_g_rows_sum_to_one_over_each_neighbourhood(edges_kind):
    bag = grid_bag(drop={(2, 2), (3, 2)})                              # holes: fewer neighbours for some
    m = model()
    S = torch.softmax(torch.randn(bag.n, 3), dim=1)
    e = edges_for(bag, edges_kind)
    G = m.diffusion_weights(S, e)
    assert torch.allclose(G.sum(1), torch.ones(bag.n), atol=1e-5)
    assert torch.all(G[e.mask == 0] == 0)                              # no weight off the graph


def test_constant_field_is_a_fixed_point_of_diffusion_and_of_the_step(edges_kind):
    bag = grid_bag()
    m = model()
    u = bag.grid
    h = torch.randn(DIM).expand(bag.n, DIM).clone()                    # constant feature field
    S = torch.softmax(torch.randn(bag.n, 3), dim=1)
    e = edges_for(bag, edges_kind)
    with torch.no_grad():
        assert torch.allclose(m.diffuse(h, S, e), h, atol=1e-5)
        # a constant h gives every patch the same concept mixture, hence the same concept
        st = m.step(h, S, u, e, m.concepts())
    assert torch.allclose(st["h"], h, atol=1e-5)


def test_flux_is_zero_across_a_boundary_with_equal_concept_response(edges_kind):
    bag = grid_bag()
    m = model()
    e = edges_for(bag, edges_kind)
    left = (bag.grid[:, 0] < 3).float()
    S = torch.stack([left, 1 - left], 1) * 0.98 + 0.01                 # two regions, a sharp boundary
    a = torch.full((bag.n,), 0.7)                                       # equal response on both sides
    rho = m.conductivity(S, a, bag.grid, e)
    assert torch.all(rho == 0)
    # control (the check can fail): a higher response on the right, peaking at the boundary, points the
    # right region's polarity towards the left side and opens the boundary, right -> left only
    x = bag.grid[:, 0]
    a2 = torch.where(left > 0, torch.tensor(0.7), 2.0 - 0.2 * (x - 3))
    rho2 = m.conductivity(S, a2, bag.grid, e)
    into_left = rho2[left > 0].sum()
    assert into_left > 0 and rho2[left == 0].sum() == 0


def test_conductivity_vanishes_with_the_drive_and_saturates_with_a_strong_one(edges_kind):
    # soft normalisation: a weak response gap opens a boundary in proportion (no jump from 0 to a
    # normalised row, the source of the gradient spikes of the first version), a strong one fully
    bag = grid_bag()
    m = model()
    e = edges_for(bag, edges_kind)
    left = (bag.grid[:, 0] < 3).float()
    S = torch.stack([left, 1 - left], 1) * 0.98 + 0.01
    x = bag.grid[:, 0]
    gap = torch.where(left > 0, torch.tensor(0.0), 1.0 - 0.1 * (x - 3))  # peaks on the right of the boundary
    weak, weaker = (m.conductivity(S, t * gap, bag.grid, e).sum(1) for t in (1e-3, 1e-5))
    assert 0 < weak.max() < 0.01 and weaker.max() <= 1.01e-2 * weak.max()   # at least linear decay
    strong = m.conductivity(S, 1e6 * gap, bag.grid, e).sum(1)
    assert strong.max() == pytest.approx(1.0, abs=1e-3)
    first = TMEvolve(D, 4, dataclasses.replace(m.cfg, flux_floor=1e-6), np.ones((M, 24))).eval()
    assert first.conductivity(S, 1e-3 * gap, bag.grid, e).sum(1).max() == pytest.approx(1.0, abs=1e-2)


def test_conductivity_gradient_stays_bounded_at_a_weak_drive(edges_kind):
    # the first version's 1e-6 floor gave d rho / d a of order 1 / floor at a weak drive: gradient
    # spikes of 1e3-1e4 per slide that froze Adam; the soft floor keeps the gradient of order one
    bag = grid_bag()
    e = edges_for(bag, edges_kind)
    left = (bag.grid[:, 0] < 3).float()
    S = torch.stack([left, 1 - left], 1) * 0.98 + 0.01
    x = bag.grid[:, 0]
    gap = torch.where(left > 0, torch.tensor(0.0), 1.0 - 0.1 * (x - 3))
    weights = torch.linspace(0.5, 1.5, bag.n).unsqueeze(1)             # a generic downstream use of rho

    def grad_norm(m, drive):
        a = (drive * gap).requires_grad_(True)
        (m.conductivity(S, a, bag.grid, e) * weights).sum().backward()
        return float(a.grad.norm())

    m = model()
    first = TMEvolve(D, 4, dataclasses.replace(m.cfg, flux_floor=1e-6), np.ones((M, 24))).eval()
    drives = (1e-2, 1e-3, 1e-4, 1e-5)
    assert max(grad_norm(m, t) for t in drives) < 50                   # measured 7-15
    assert max(grad_norm(first, t) for t in drives) > 1e3              # measured 5e4 at 1e-5


def test_dense_and_sparse_edge_algebra_agree():
    bag = grid_bag(drop={(1, 1), (4, 3)})
    m = model()
    dense = m(bag)["out"]
    sparse = TMEvolve(D, 4, dataclasses.replace(m.cfg, dense_max=0), m.text_emb.numpy())
    sparse.load_state_dict(m.state_dict())
    sparse.eval()
    assert torch.allclose(dense, sparse(bag)["out"], atol=1e-5)


def test_farthest_point_seeds_spread_over_the_grid():
    pts = torch.tensor([(x, y) for y in range(10) for x in range(10)], dtype=torch.float32)
    seeds = pts[farthest_point_seeds(pts, 5)]
    # the first seed is central, the next four are the four corners
    assert {tuple(map(int, s)) for s in seeds[1:]} == {(0, 0), (9, 0), (0, 9), (9, 9)}


@pytest.mark.parametrize("name", ["mean", "abmil", "dsmil"])
def test_mil_pooling_is_invariant_to_patch_permutation(name):
    bag = grid_bag()
    perm = torch.from_numpy(np.random.default_rng(3).permutation(bag.n))
    pbag = SlideBag.from_arrays(bag.x[perm].numpy(), (bag.grid[perm].numpy() * 224).astype(np.int64), 224)
    torch.manual_seed(0)
    m = create_mil_model(name, D, 4, dim=DIM, dropout=0.0, attn_hidden=8).eval()
    assert torch.allclose(m(bag)["out"], m(pbag)["out"], atol=1e-5)


def test_tmevolve_is_invariant_to_patch_order():
    # FPS breaks its (frequent) grid ties by position, not by index, so the whole model is invariant
    bag = grid_bag(h=5, w=7, drop={(6, 4)})
    perm = torch.from_numpy(np.random.default_rng(4).permutation(bag.n))
    pbag = SlideBag.from_arrays(bag.x[perm].numpy(), (bag.grid[perm].numpy() * 224).astype(np.int64), 224)
    m = model()
    s1, s2 = farthest_point_seeds(bag.grid, 3), farthest_point_seeds(pbag.grid, 3)
    assert torch.equal(bag.grid[s1], pbag.grid[s2])
    assert torch.allclose(m(bag)["out"], m(pbag)["out"], atol=1e-5)


def test_every_registered_model_runs_and_ablations_change_the_config():
    bag = grid_bag()
    emb = np.random.default_rng(0).normal(size=(M, 24))
    for name in ["mean", "abmil", "transmil", "graphmil", "dsmil", "tmevolve", "tmevolve_nodiff", "tmevolve_noevo",
                 "tmevolve_nobal", "tmevolve_randcon", "tmevolve_q1_k2"]:
        m = create_mil_model(name, D, 3, dim=DIM, dropout=0.1, attn_hidden=8, concept_emb=emb, K=4, Q=2)
        out = m(bag)
        assert torch.isfinite(out["out"]).all(), name
    rc = create_mil_model("tmevolve_randcon", D, 3, dim=DIM, concept_emb=emb)
    assert not torch.allclose(rc.text_emb, torch.as_tensor(emb, dtype=torch.float32))
    assert create_mil_model("tmevolve_noevo", D, 3, dim=DIM, concept_emb=emb, Q=3).cfg.Q == 0
    assert "tmevolve" in MIL_MODELS
    with pytest.raises(ValueError, match="unknown MIL model"):
        create_mil_model("nope", D, 3)


def test_a_misspelt_model_setting_is_an_error_naming_it():
    """The factory is strict (repro.config.from_dict): only graph MIL's depth from the shared
    ``model`` block is accepted unused; any other unknown key names the variant and the key."""
    emb = np.random.default_rng(0).normal(size=(M, 24))
    assert create_mil_model("tmevolve", D, 3, dim=DIM, concept_emb=emb, gcn_layers=2).cfg.dim == DIM
    with pytest.raises(ValueError, match=r"tmevolve_nobal\.dimm .*did you mean 'dim'"):
        create_mil_model("tmevolve_nobal", D, 3, dimm=DIM, concept_emb=emb)
