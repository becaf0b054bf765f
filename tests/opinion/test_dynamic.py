"""Dynamic networks (game G6): the ties' two-state chain against hand-worked rounds and an exact simulation of the
continuous-time chain, the interaction graph in rewards, observations, attention and the scripted baselines."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import torch

from repro.papers.opinion.baselines import create_baseline, play_scripted
from repro.papers.opinion.experiment import FamilyConfig, graph_sampler
from repro.papers.opinion.game import WAIT, GameConfig, OpinionGame, switch_ties
from repro.papers.opinion.graphs import drop_ties, from_networkx, hunter_gatherer
from repro.rl.marl import GraphBatch, RecurrentGraphPolicy, Obs, scatter_softmax
from repro.seeding import torch_generator


def test_one_round_of_the_chain_worked_by_hand():
    # q = 0.5, r = ln 2: e^-r = 1/2, so silent -> interacting w.p. q (1 - 1/2) = 0.25, interacting stays w.p.
    # q + (1 - q) / 2 = 0.75, and silent at both ends met in between w.p. 1 - 2^-0.5 / 0.75 = 0.0572
    q = np.full(5, 0.5)
    on = np.array([True, True, False, False, False])
    u = np.array(
        [
            [0.9, 0.9, 0.20, 0.30, 0.30],  # row 0: silent -> interacting below 0.25
            [0.70, 0.80, 0.0, 0.0, 0.0],  # row 1: stays interacting below 0.75
            [0.9, 0.9, 0.9, 0.05, 0.06],
        ]
    )  # row 2: silent, silent, met in between below 0.0572
    nxt, met = switch_ties(on, q, math.log(2), u)
    assert nxt.tolist() == [True, False, True, False, False]
    assert met.tolist() == [True, True, True, True, False]
    assert 1 - 2**-0.5 / 0.75 == pytest.approx(0.057191, abs=1e-6)


def test_chain_agrees_with_an_exact_simulation_of_the_continuous_time_chain():
    # the same chain simulated by exponential holding times (rate q r out of silence, (1 - q) r out of interacting)
    # over one unit of time from silence: P(interacting at the end) and P(met | silent at both ends)
    rng = np.random.default_rng(0)
    q, r, n = 0.3, 1.7, 200_000
    state, t = np.zeros(n, bool), np.zeros(n)
    visited = np.zeros(n, bool)
    while True:
        rate = np.where(state, (1 - q) * r, q * r)
        t = t + rng.exponential(1 / rate)
        jump = t < 1
        if not jump.any():
            break
        state = np.where(jump, ~state, state)
        visited |= jump  # every jump out of silence is a visit; a jump back follows one
    nxt, met = switch_ties(np.zeros(n, bool), np.full(n, q), r, np.random.default_rng(1).random((3, n)))
    assert nxt.mean() == pytest.approx(state.mean(), abs=0.005)
    both_silent = ~state
    assert met[~nxt].mean() == pytest.approx(visited[both_silent].mean(), abs=0.005)


def test_chain_keeps_its_stationary_law_and_the_closed_forms_at_q_0_and_1():
    rng = np.random.default_rng(2)
    q, r = np.full(100_000, 0.4), 0.8
    on = rng.random(len(q)) < q
    for _ in range(10):
        on, met = switch_ties(on, q, r, rng.random((3, len(q))))
    assert on.mean() == pytest.approx(0.4, abs=0.01)
    assert met.mean() == pytest.approx(1 - 0.6 * math.exp(-0.4 * 0.8), abs=0.01)  # 1 - (1 - q) e^(-q r)
    never, _ = switch_ties(np.zeros(3, bool), np.zeros(3), 5.0, rng.random((3, 3)))
    always, met1 = switch_ties(np.ones(3, bool), np.ones(3), 5.0, rng.random((3, 3)))
    assert not never.any() and always.all() and met1.all()


TRIANGLE = from_networkx(nx.complete_graph(3))
# pair {0, 1} and {0, 2} always interact (q = 1), pair {1, 2} never (q = 0)
PAIR_Q = {(0, 1): 1.0, (0, 2): 1.0, (1, 2): 0.0}
TRIANGLE_Q = TRIANGLE._replace(q=np.array([PAIR_Q[tuple(sorted(e))] for e in zip(TRIANGLE.src, TRIANGLE.dst)]))


def _game(graph, seed=0, **cfg):
    return OpinionGame(GameConfig(**cfg), lambda B, rng: [graph] * B, 1, seed)


def test_an_episode_on_a_triangle_uses_each_rounds_interaction_graph():
    # agents 1 and 2 never interact, so at every round 1 sees only 0 and 2 sees only 0; truth 1, stances [1, 1, 0]:
    # agent 0: (0.1 - 0.2) / 2 conformity; agent 1: +0.1; agent 2: -0.2; alpha 0.5 adds half the truth term
    game = _game(TRIANGLE_Q, alpha=0.5, switch_rate=3.0, horizon=4)
    obs = game.reset(truth=torch.tensor([1]))
    pair_12 = ((game.graph.src == 1) & (game.graph.dst == 2)) | ((game.graph.src == 2) & (game.graph.dst == 1))
    done = False
    while not done:
        assert obs.mask is not None and obs.mask.tolist() == (~pair_12).tolist()
        obs, r, done = game.step(torch.tensor([1, 1, 0]))
        assert r.tolist() == pytest.approx([0.05 - 0.025, 0.1, -0.2])
    assert game.agreement(game.stance).item() == pytest.approx(2 / 4)  # ties 0-1 both ways agree, 0-2 not


def test_interaction_graphs_are_symmetric_per_round_change_within_an_episode_and_repeat_with_the_seed():
    g = hunter_gatherer(30, np.random.default_rng(0), camp_q=0.5, bridge_q=0.2)

    def masks(seed):
        game = _game(g, seed=seed, alpha=0.5, switch_rate=1.0, horizon=6)
        out = [game.reset().mask.clone()]
        for _ in range(5):
            out.append(game.step(torch.zeros(30, dtype=torch.long))[0].mask.clone())
        return game, torch.stack(out)

    game, m = masks(7)
    key = {(int(s), int(d)): e for e, (s, d) in enumerate(zip(game.graph.src, game.graph.dst))}
    rev = torch.tensor([key[(int(d), int(s))] for s, d in zip(game.graph.src, game.graph.dst)])
    assert torch.equal(m, m[:, rev])  # a pair interacts in both directions or in neither
    assert (m[1:] & ~m[:-1]).any() and (~m[1:] & m[:-1]).any()  # ties turn on and off: per round, not a union
    assert torch.equal(m, masks(7)[1]) and not torch.equal(m, masks(8)[1])


def test_static_games_are_unchanged_by_the_dynamic_machinery():
    game = _game(TRIANGLE, alpha=0.5)
    obs = game.reset(truth=torch.tensor([1]))
    assert obs.mask is None and game.seen.all()
    with pytest.raises(ValueError, match="no tie probabilities"):
        _game(TRIANGLE, switch_rate=1.0).reset()


def test_masked_attention_is_the_softmax_over_seen_edges_and_an_all_true_mask_changes_nothing():
    g = torch_generator(3)
    dst = torch.tensor([0, 0, 0, 1, 1, 2])
    score = torch.randn(6, generator=g)
    mask = torch.tensor([True, False, True, False, False, True])
    alpha = scatter_softmax(score, dst, 3, mask)
    assert torch.allclose(alpha[[0, 2]], score[[0, 2]].softmax(0)) and alpha[1] == 0
    assert alpha[3:5].tolist() == [0.0, 0.0] and alpha[5].item() == pytest.approx(1.0)  # node 1 sees nobody: no NaN
    policy = RecurrentGraphPolicy(4, 3, 3, 2, hidden=8, seed=0)
    src = torch.tensor([1, 2, 0, 2, 0, 1])
    gb = GraphBatch(src, dst, torch.tensor([0, 3]), torch.tensor([0, 6]))
    own, edge, h = torch.randn(3, 4, generator=g), torch.randn(6, 3, generator=g), torch.zeros(3, 8)
    full = policy.step(h, Obs(own, edge), gb)
    ones = policy.step(h, Obs(own, edge, torch.ones(6, dtype=torch.bool)), gb)
    assert all(torch.allclose(a, b) for a, b in zip(full, ones))


def test_percolation_drops_a_switching_pair_whole():
    g = hunter_gatherer(40, np.random.default_rng(1), camp_q=0.5, bridge_q=0.2)
    d = drop_ties(g, 0.5, np.random.default_rng(2))
    kept = set(zip(d.src.tolist(), d.dst.tolist()))
    assert 0 < len(kept) < len(g.src) and all((b, a) in kept for a, b in kept)
    assert len(d.q) == len(d.src)


def test_baselines_read_only_the_interaction_graph():
    # voter on the triangle: agent 1 can copy only agent 0 (it never interacts with 2), agent 2 only agent 0
    game = _game(TRIANGLE_Q, alpha=0.5, switch_rate=2.0, horizon=3)
    play_scripted(create_baseline("voter"), game, seed=0, truth=torch.tensor([1]))
    first, second = game.history[0], game.history[1]
    assert second[1].item() in (first[0].item(), first[1].item()) and second[2].item() in (
        first[0].item(),
        first[2].item(),
    )
    for name in ("bayes_honest", "degroot", "majority"):
        game = _game(TRIANGLE_Q, alpha=0.5, switch_rate=2.0, horizon=3)
        play_scripted(create_baseline(name), game, seed=0, truth=torch.tensor([1]))
        assert all(((h >= 0) & (h <= WAIT)).all() for h in game.history)


def test_the_dynamic_family_keeps_one_camp_network_per_seed_unless_it_rewires():
    fam = FamilyConfig(dynamic_nodes=20)
    sample = graph_sampler("dynamic", fam, graph_seed=5)
    a, b = sample(2, np.random.default_rng(0))
    assert a is b and a.q is not None and set(np.unique(a.q)) <= {0.5, 0.2}
    assert np.array_equal(graph_sampler("dynamic", fam, graph_seed=5)(1, np.random.default_rng(9))[0].src, a.src)
    rewired = graph_sampler("dynamic", FamilyConfig(dynamic_nodes=20, rewire=True), graph_seed=5)
    c, d = rewired(2, np.random.default_rng(0))
    assert not (len(c.src) == len(d.src) and np.array_equal(c.src, d.src) and np.array_equal(c.dst, d.dst))
    with pytest.raises(ValueError, match="camp_q"):
        FamilyConfig(camp_q=1.5)
