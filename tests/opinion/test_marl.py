"""The shared multi-agent PPO pieces (repro.rl.marl, repro.rl.ppo.gae batched) and learning in the game."""

from __future__ import annotations


import pytest
import torch

from repro.papers.opinion.game import EDGE_DIM, OWN_DIM, GameConfig, OpinionGame
from repro.papers.opinion.graphs import real_graph
from repro.papers.opinion.experiment import TrainConfig, evaluate_agent, evaluate_baselines, train_agent
from repro.rl.marl import GraphAttention, GraphBatch, RecurrentGraphPolicy, _replay, rollout, scatter_softmax
from repro.rl.ppo import gae
from repro.seeding import torch_generator


def test_batched_gae_equals_one_column_at_a_time():
    g = torch_generator(0)
    r, v = torch.randn(20, 7, generator=g), torch.randn(20, 7, generator=g)
    adv, ret = gae(r, v, 0.0, gamma=0.99, lam=0.95)
    for k in range(7):
        a, rt = gae(r[:, k], v[:, k], 0.0, gamma=0.99, lam=0.95)
        assert torch.allclose(adv[:, k], a) and torch.allclose(ret[:, k], rt)


def test_scatter_softmax_equals_dense_softmax_per_receiver():
    g = torch_generator(1)
    dst = torch.tensor([0, 0, 0, 2, 2, 3])
    score = torch.randn(6, generator=g)
    alpha = scatter_softmax(score, dst, 4)
    assert torch.allclose(alpha[:3], score[:3].softmax(0)) and torch.allclose(alpha[3:5], score[3:5].softmax(0))
    assert alpha[5].item() == pytest.approx(1.0)


def test_attention_is_invariant_to_edge_order_and_isolated_agents_get_no_message():
    g = torch_generator(2)
    att = GraphAttention(4, 3, 8)
    h, edge = torch.randn(5, 4, generator=g), torch.randn(6, 3, generator=g)
    src, dst = torch.tensor([1, 2, 3, 0, 4, 0]), torch.tensor([0, 0, 0, 1, 1, 2])
    gb = GraphBatch(src, dst, torch.tensor([0, 5]), torch.tensor([0, 6]))
    msg, alpha = att(h, edge, gb)
    perm = torch.tensor([5, 3, 0, 4, 2, 1])
    msg2, alpha2 = att(h, edge[perm], GraphBatch(src[perm], dst[perm], gb.node_ptr, gb.edge_ptr))
    assert torch.allclose(msg, msg2, atol=1e-6) and torch.allclose(alpha[perm], alpha2)
    assert torch.all(msg[3:] == 0)  # agents 3 and 4 see nobody


def test_replay_of_a_slice_of_games_reproduces_the_rollout():
    # PPO re-runs the recurrent policy on slices of games: the log-probabilities must be those of the rollout
    karate = real_graph("karate")
    game = OpinionGame(GameConfig(alpha=0.5, other_play=True), lambda B, rng: [karate] * B, 6, 0)
    policy = RecurrentGraphPolicy(OWN_DIM, EDGE_DIM, 3, 2, hidden=16, seed=0)
    ro = rollout(policy, game, torch_generator(0))
    n0, n1 = int(ro.graph.node_ptr[2]), int(ro.graph.node_ptr[5])
    with torch.no_grad():
        logp, _, value, _ = _replay(policy, ro, 2, 5)
    assert torch.allclose(logp, ro.logp[:, n0:n1], atol=1e-5) and torch.allclose(value, ro.values[:, n0:n1], atol=1e-5)


def test_same_seed_same_policy_and_rollout():
    a = RecurrentGraphPolicy(OWN_DIM, EDGE_DIM, 3, 2, hidden=8, seed=3)
    b = RecurrentGraphPolicy(OWN_DIM, EDGE_DIM, 3, 2, hidden=8, seed=3)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


@pytest.mark.slow
def test_learned_agents_beat_chance_at_alpha_one_and_learn_the_belief_probe():
    # alpha = 1: only the truth pays. After a short training the agents must beat the random floor
    # clearly; the belief probe, trained on the truth, must beat chance as well. Floor: 0.5 +- 0.02
    # (32 games x 34 agents, 4 binomial SEs); the ceiling (oracle) is 1, the honest private stance ~0.59.
    cfg = TrainConfig(iterations=40, n_games=16, eval_games=32, hidden=32)
    policy, hist = train_agent(cfg, "karate", 1.0, other_play=True, seed=0, graph_seed=0)
    res = evaluate_agent(policy, cfg, "karate", 1.0, eval_seed=11, graph_seed=0, seed=0)
    base = evaluate_baselines(["random", "bayes_honest"], cfg, "karate", 1.0, eval_seed=11, graph_seed=0)
    assert base["random"]["accuracy"] < 0.55
    assert res["accuracy"] > 0.6, (res, hist[-1])
    assert hist[-1]["mean_return"] > hist[0]["mean_return"]


def test_attention_lift_is_one_under_uniform_attention_and_tracks_a_planted_degree_preference():
    # the measure Fig. 3 correlates with centrality: alpha_ij * d_i averaged over a node's viewers
    import numpy as np
    from scipy.stats import spearmanr

    from repro.papers.opinion.experiment import _attention_lift
    from repro.papers.opinion.graphs import centrality

    g = real_graph("karate")
    game = OpinionGame(GameConfig(alpha=0.5), lambda B, rng: [g] * B, 3, 0)
    game.reset()
    deg = torch.as_tensor(np.bincount(g.src, minlength=g.n), dtype=torch.float)
    for c, sign in ((0.0, 0), (1.0, 1), (-1.0, -1)):
        alpha = scatter_softmax(c * deg[game.graph.src % g.n].log(), game.graph.dst, game.graph.n_nodes)
        lift, _ = _attention_lift(game, alpha[None])
        if sign == 0:
            assert np.allclose(lift, 1.0)
        else:
            assert sign * spearmanr(lift, centrality(g)["degree"]).statistic > 0.8


def test_training_diagnostics_per_iteration_and_their_summary():
    # the curves the DAG writes per run: final action shares are a distribution, the k3 KL is >= 0,
    # and the summary table reads the first and last iteration of each (family, alpha, method)
    from repro.papers.opinion.experiment import CURVES, training_curves

    cfg = TrainConfig(iterations=3, n_games=2, eval_games=2, hidden=8)
    _, hist = train_agent(cfg, "florentine", 1.0, other_play=True, seed=0, graph_seed=0)
    assert len(hist) == 3
    for s in hist:
        assert abs(s["final_action0"] + s["final_action1"] + s["final_action2"] - 1) < 1e-6
        assert s["approx_kl"] >= 0 and 0 <= s["entropy"] <= torch.log(torch.tensor(3.0)).item() + 1e-6
    rec = {"family": "static", "alpha": 1.0, "method": "marl", "seed": 0,
           "training": {"curves": [{k: s[k] for k in CURVES} for s in hist]}}
    curves, summary = training_curves([rec, {**rec, "seed": 1}])
    assert len(curves) == 6 and len(summary) == 1
    assert summary["return@0"].iloc[0] == hist[0]["mean_return"] and summary["wait@2"].iloc[0] == hist[2]["final_action2"]
