"""The reference's training curricula (C1-C4) in closed form, through the game, and sampled evaluation."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from repro.config import from_dict, preset_error, workflow_config
from repro.papers.opinion.curriculum import Curriculum
from repro.papers.opinion.experiment import TrainConfig, _game, evaluate_agent, train_agent
from repro.papers.opinion.game import EDGE_DIM, OWN_DIM, WAIT, GameConfig, OpinionGame, drop_ties
from repro.papers.opinion.graphs import real_graph, scale_free
from repro.rl.marl import RecurrentGraphPolicy
from repro.rl.ppo import annealed_lr

REPO = Path(__file__).resolve().parents[2]
K = 200  # PPO updates in all


def test_informed_share_schedule_closed_form():
    c = Curriculum()
    # alpha > 0: exponential 1 -> p over all of training
    assert c.informed_share(0, K, 0.5, 0.7) == pytest.approx(1.0)
    assert c.informed_share(K / 2, K, 0.5, 0.7) == pytest.approx(math.sqrt(0.7))
    assert c.informed_share(K, K, 0.5, 0.7) == pytest.approx(0.7)
    assert c.informed_share(2 * K, K, 0.5, 0.7) == pytest.approx(0.7)  # clipped past the end
    # alpha = 0: exponential 1 -> 0.01 over the first 95%, then linear 0.01 -> 0
    assert c.informed_share(0, K, 0.0, 0.7) == pytest.approx(1.0)
    assert c.informed_share(0.475 * K, K, 0.0, 0.7) == pytest.approx(0.1)  # half way in log: sqrt(0.01)
    assert c.informed_share(0.95 * K, K, 0.0, 0.7) == pytest.approx(0.01)
    assert c.informed_share(0.975 * K, K, 0.0, 0.7) == pytest.approx(0.005)
    assert c.informed_share(K, K, 0.0, 0.7) == 0.0


def test_tie_keep_schedule_closed_form():
    c = Curriculum(tie_keep_init=0.2)
    a, b, cc = 1.05, 24.0, 7 / 30
    assert c.keep_prob(0, K) == pytest.approx(0.2 + 0.8 * a / (1 + math.exp(b * cc)))  # 0.2033: q0 + 0.4%
    assert c.keep_prob(cc * K, K) == pytest.approx(0.2 + 0.8 * a / 2)  # the sigmoid's midpoint
    f_one = cc + math.log(1 / (a - 1)) / b  # 1.05 / (1 + e^-x) = 1 at x = ln 20
    assert c.keep_prob((f_one - 0.01) * K, K) < 1.0 and c.keep_prob((f_one + 0.001) * K, K) == 1.0
    assert c.keep_prob(K / 2, K) == 1.0 and c.keep_prob(K, K) == 1.0
    assert Curriculum(tie_keep_init=1.0).keep_prob(0, K) == 1.0  # no dropping at all


def test_truth_bonus_schedule_only_at_alpha_zero_and_gone_after_half():
    c = Curriculum()
    assert c.bonus(0, K, 0.0) == pytest.approx(0.05)
    assert c.bonus(K / 4, K, 0.0) == pytest.approx(0.025)
    assert c.bonus(K / 2, K, 0.0) == 0.0 and c.bonus(K, K, 0.0) == 0.0
    assert all(c.bonus(k, K, a) == 0.0 for k in (0, K / 4, K) for a in (0.25, 0.5, 1.0))


def test_reset_timing_follows_the_reference():
    # iteration 0 plays the first reset (informed 1, keep q0); iteration k >= 1 the schedules at k - 1
    c = Curriculum(tie_keep_init=0.3)
    s0 = c.at(0, K, 0.5, 0.7)
    assert (s0.informed_share, s0.keep_prob, s0.truth_bonus) == (1.0, 0.3, 0.0)
    s = c.at(101, K, 0.0, 0.7)
    assert s.informed_share == pytest.approx(c.informed_share(100, K, 0.0, 0.7))
    assert s.keep_prob == pytest.approx(c.keep_prob(100, K)) and s.truth_bonus == pytest.approx(c.bonus(101, K, 0.0))
    off = Curriculum(enabled=False).at(0, K, 0.0, 0.7)
    assert (off.informed_share, off.keep_prob, off.truth_bonus) == (None, 1.0, 0.0)


def test_annealed_lr_closed_form_and_in_training():
    assert annealed_lr(3e-3, 0, 8) == 3e-3
    assert annealed_lr(3e-3, 4, 8) == pytest.approx(1.5e-3)
    assert annealed_lr(3e-3, 8, 8) == 0.0
    # 4 iterations x 1 epoch x 2 minibatches = 8 optimiser steps; an iteration reports its last step's rate
    cfg = TrainConfig(iterations=4, n_games=2, eval_games=2, hidden=8, lr=0.01, ppo_epochs=1, minibatches=2)
    _, hist = train_agent(cfg, "florentine", 0.0, other_play=True, seed=0, graph_seed=0)
    assert [h["lr"] for h in hist] == pytest.approx([0.01 * (1 - s / 8) for s in (1, 3, 5, 7)])
    # the curriculum each iteration trained with (alpha 0: bonus 0.05 at 0, 0.025 at 1, 0 from K/2 = 2)
    assert [h["truth_bonus"] for h in hist] == pytest.approx([0.05, 0.025, 0.0, 0.0])
    assert hist[0]["informed_share"] == 1.0 and hist[-1]["informed_share"] < hist[1]["informed_share"]
    _, flat = train_agent(TrainConfig(iterations=2, n_games=2, eval_games=2, hidden=8, anneal_lr=False),
                          "florentine", 1.0, other_play=True, seed=0, graph_seed=0)
    assert [h["lr"] for h in flat] == [1e-3, 1e-3] and all(h["truth_bonus"] == 0 for h in flat)


def test_tie_dropping_keeps_a_valid_subgraph_and_the_expected_share():
    g = scale_free(100, 3, seed=0)
    edges = set(zip(g.src.tolist(), g.dst.tolist()))
    rng = np.random.default_rng(0)
    kept = []
    for _ in range(200):
        d = drop_ties(g, 0.3, rng)
        assert d.n == g.n and len(d.src) == len(d.dst) == len(d.weight)
        assert set(zip(d.src.tolist(), d.dst.tolist())) <= edges and (d.weight > 0).all()
        kept.append(len(d.src) / len(g.src))
    # planted share 0.3: each of E directed ties kept independently; mean over 200 draws within 4 SE
    se = math.sqrt(0.3 * 0.7 / len(g.src) / 200)
    assert abs(np.mean(kept) - 0.3) < 4 * se
    assert np.all(drop_ties(g, 1.0, rng).src == g.src) and len(drop_ties(g, 0.0, rng).src) == 0


def test_dropped_ties_leave_what_agents_see_and_the_conformity_mean():
    karate = real_graph("karate")
    game = OpinionGame(GameConfig(alpha=0.0), lambda B, rng: [karate] * B, 8, 0)
    game.set_curriculum(keep_prob=0.4)
    obs = game.reset()
    n_kept = (game.graph.edge_ptr[1:] - game.graph.edge_ptr[:-1]).float()
    assert obs.edge.shape[0] == len(game.graph.src) < 8 * len(karate.src)
    assert len(set(n_kept.tolist())) > 1  # every game draws its own mask
    # everyone says 1: an agent with at least one kept tie earns agree = 0.1 (mean over its kept ties), one with none 0
    _, r, _ = game.step(torch.ones(game.graph.n_nodes, dtype=torch.long))
    sees = torch.zeros(game.graph.n_nodes).index_add(0, game.graph.dst, torch.ones(len(game.graph.dst))) > 0
    assert torch.allclose(r[sees], torch.full_like(r[sees], 0.1)) and torch.all(r[~sees] == 0) and (~sees).any()
    # keep 1 draws nothing: the same signals and graph as a game without the curriculum
    a = OpinionGame(GameConfig(alpha=0.5), lambda B, rng: [karate] * B, 4, 1)
    b = OpinionGame(GameConfig(alpha=0.5), lambda B, rng: [karate] * B, 4, 1)
    b.set_curriculum(keep_prob=1.0)
    a.reset(), b.reset()
    assert torch.equal(a.signal, b.signal) and torch.equal(a.graph.src, b.graph.src)


def test_informed_share_override_sets_the_signal_share():
    g = scale_free(200, 2, seed=0)
    game = OpinionGame(GameConfig(alpha=0.0), lambda B, rng: [g] * B, 20, 0)
    game.set_curriculum(informed_share=0.9)
    game.reset()
    assert abs(game.informed.float().mean().item() - 0.9) < 4 * math.sqrt(0.09 / 4000)
    game.set_curriculum()  # back to G1: nobody informed at alpha = 0
    game.reset()
    assert not game.informed.any()


def test_truth_bonus_is_in_the_training_reward_only():
    karate = real_graph("karate")
    cfg = TrainConfig(n_games=4)
    train = _game(cfg, "karate", 0.0, False, 4, graph_seed=0, game_seed=5)
    fresh = _game(cfg, "karate", 0.0, False, 4, graph_seed=0, game_seed=5)  # what evaluate_agent builds
    train.set_curriculum(truth_bonus=0.05)
    train.reset(torch.tensor([1, 0, 1, 0])), fresh.reset(torch.tensor([1, 0, 1, 0]))
    stance = torch.randint(0, 3, (4 * karate.n,), generator=torch.Generator().manual_seed(0))
    stance[:5] = WAIT
    _, r_train, _ = train.step(train.relabel(stance))
    _, r_eval, _ = fresh.step(fresh.relabel(stance))
    truth, conform = fresh.terms(fresh.stance)
    assert torch.allclose(r_eval, conform)  # alpha 0: conformity only
    assert torch.allclose(r_train, 0.95 * conform + 0.05 * truth)
    assert (r_train != r_eval).any() and torch.all(r_train[:5] == r_eval[:5])  # waiting: both terms 0


def test_sampled_evaluation_is_deterministic_and_differs_from_greedy():
    cfg = TrainConfig(n_games=2, eval_games=4, hidden=8, graphs=("florentine",))
    policy = RecurrentGraphPolicy(OWN_DIM, EDGE_DIM, 3, 2, hidden=8, seed=0)
    kw = dict(eval_seed=7, graph_seed=0, seed=0)
    a = evaluate_agent(policy, cfg, "dynamic", 0.5, **kw)
    b = evaluate_agent(policy, cfg, "dynamic", 0.5, **kw)
    assert a == b
    # the untrained policy is near uniform: sampling waits about a third of the time, the argmax is one fixed action
    assert 0.15 < a["wait_rate"] < 0.55
    greedy = evaluate_agent(policy, TrainConfig(n_games=2, eval_games=4, hidden=8, eval_greedy=True), "dynamic", 0.5, **kw)
    assert greedy != a


@pytest.mark.parametrize("key, value", [("tie_keep_init", 1.5), ("truth_bonus", -0.1), ("zero_switch", 0.0),
                                        ("tie_ramp", [1.05, 24.0]), ("truth_bonus_span", 2.0)])
def test_bad_schedule_config_is_refused_naming_the_key(key, value):
    with pytest.raises(ValueError, match=key):
        from_dict(TrainConfig, {"curriculum": {key: value}}, "opinion.small.train")
    schema_path = REPO / "workflow/schemas/opinion.schema.yaml"
    bad = copy.deepcopy(workflow_config(REPO)["opinion"]["small"])
    bad["train"]["curriculum"] = {key: value}
    assert f"opinion.small.train.curriculum.{key}" in preset_error(bad, str(schema_path), "opinion.small")
    bad["train"]["curriculum"] = {"tie_keep_nit": 0.5}
    assert "tie_keep_nit" in preset_error(bad, str(schema_path), "opinion.small")
