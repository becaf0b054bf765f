"""The opinion game against hand-computed rewards, the closed-form posterior and other-play invariances."""

from __future__ import annotations

import math

import pytest
import torch

from repro.papers.opinion.game import WAIT, GameConfig, OpinionGame, private_posterior
from repro.papers.opinion.graphs import Graph, from_networkx, scale_free

import networkx as nx

PATH3 = from_networkx(nx.path_graph(3))


def _game(graph: Graph, n_games=1, seed=0, **cfg) -> OpinionGame:
    return OpinionGame(GameConfig(**cfg), lambda B, rng: [graph] * B, n_games, seed)


def test_rewards_match_hand_computation_on_a_path():
    # path 0 - 1 - 2, truth 1, stances [1, 1, 0], alpha 0.5:
    # agent 0: truth +0.1, sees {1} agreeing: +0.1              -> 0.5*0.1 + 0.5*0.1 = 0.1
    # agent 1: truth +0.1, sees {0 agree, 2 disagree}: (0.1-0.2)/2 -> 0.05 - 0.025 = 0.025
    # agent 2: truth -0.2, sees {1} disagreeing: -0.2             -> -0.1 - 0.1 = -0.2
    game = _game(PATH3, alpha=0.5)
    game.reset(truth=torch.tensor([1]))
    _, r, done = game.step(torch.tensor([1, 1, 0]))
    assert r.tolist() == pytest.approx([0.1, 0.025, -0.2])
    assert not done


def test_waiting_is_neutral_for_self_and_neighbours():
    # agent 1 waits: it earns 0; agents 0 and 2 see only a waiting neighbour: conformity 0
    game = _game(PATH3, alpha=0.25)
    game.reset(truth=torch.tensor([0]))
    _, r, _ = game.step(torch.tensor([0, WAIT, 1]))
    assert r.tolist() == pytest.approx([0.25 * 0.1, 0.0, 0.25 * -0.2])


def test_oracle_earns_the_maximum_each_step_and_episode_ends_at_horizon():
    g = scale_free(30, 2, seed=1)
    game = _game(g, n_games=4, alpha=0.3, horizon=5)
    game.reset()
    total, done, steps = torch.zeros(4 * 30), False, 0
    while not done:
        _, r, done = game.step(game.truth[game.game].clone())
        total += r
        steps += 1
    assert steps == 5
    assert total.tolist() == pytest.approx([5 * 0.1] * 120)  # alpha*0.1 + (1-alpha)*0.1 per step


def test_signals_follow_the_reference_definition():
    # alpha = 0: nobody informed; otherwise a share uninformed, informed signals ~ N(y, 1)
    g = scale_free(200, 2, seed=0)
    game = _game(g, n_games=50, seed=3, alpha=0.0)
    game.reset()
    assert not game.informed.any() and torch.all(game.signal == 0.5)
    game = _game(g, n_games=50, seed=3, alpha=0.6, uninformed_share=0.3)
    game.reset()
    share = 1 - game.informed.float().mean().item()
    assert abs(share - 0.3) < 4 * math.sqrt(0.3 * 0.7 / 10_000)  # 10,000 agents: 4 binomial SEs
    noise = (game.signal - game.truth[game.game])[game.informed]
    assert abs(noise.mean().item()) < 4 / math.sqrt(len(noise)) and abs(noise.std().item() - 1) < 0.05


def test_private_posterior_is_calibrated_and_matches_closed_form():
    s = torch.tensor([0.5, 1.5, -0.5])
    p = private_posterior(s, torch.tensor([True, True, False]), 1.0)
    # N(s; 1, 1) / (N(s; 0, 1) + N(s; 1, 1)) at s = 1.5: exp(-0.125) / (exp(-0.125) + exp(-1.125))
    assert p.tolist() == pytest.approx([0.5, math.exp(-0.125) / (math.exp(-0.125) + math.exp(-1.125)), 0.5])
    g = scale_free(100, 2, seed=0)
    game = _game(g, n_games=200, seed=5, alpha=1.0, uninformed_share=0.0)
    game.reset()
    y = game.truth[game.game].float()
    for lo in (0.1, 0.3, 0.5, 0.7):  # in each posterior bin, the share of y = 1 matches the mean posterior
        m = (game.posterior >= lo) & (game.posterior < lo + 0.2)
        n = int(m.sum())
        assert abs(y[m].mean().item() - game.posterior[m].mean().item()) < 4 * math.sqrt(0.25 / n)


def test_other_play_relabels_consistently():
    # an agent that says the sign of its (relabelled) signal acts identically in the game's labels
    # (everyone informed: at s = 1/2 exactly "s > 1/2" is not label-symmetric)
    g = scale_free(40, 2, seed=2)
    plain = _game(g, n_games=8, seed=7, alpha=0.5, uninformed_share=0.0)
    op = _game(g, n_games=8, seed=7, alpha=0.5, uninformed_share=0.0, other_play=True)
    o1, o2 = plain.reset(), op.reset()
    assert op.swap.any() and not op.swap.all()
    a1 = (o1.own[:, 0] > 0.5).long()
    a2 = (o2.own[:, 0] > 0.5).long()  # in each agent's own labels
    _, r1, _ = plain.step(a1)
    obs2, r2, _ = op.step(a2)
    assert torch.equal(plain.stance, op.stance) and torch.allclose(r1, r2)
    # what agent i sees of j along an edge is j's stance in i's labels
    seen = obs2.edge[:, :3].argmax(-1)
    expect = torch.where(op.swap[op.graph.dst], 1 - op.stance[op.graph.src], op.stance[op.graph.src])
    assert torch.equal(seen, expect)
    # the belief target is the truth in each agent's labels
    assert torch.equal(op.aux_target, op.truth[op.game] ^ op.swap.long())


def test_a_fixed_label_convention_agrees_without_other_play_only():
    g = scale_free(60, 2, seed=4)
    for other_play, expected in ((False, 0.1), (True, None)):
        game = _game(g, n_games=16, seed=1, alpha=0.0, other_play=other_play)
        game.reset()
        _, r, _ = game.step(torch.zeros(16 * 60, dtype=torch.long))  # "always say my 0"
        if expected is not None:
            assert r.tolist() == pytest.approx([expected] * len(r))
        else:  # random frames: agreement with a neighbour w.p. 1/2 -> mean 0.5*0.1 + 0.5*(-0.2) = -0.05
            assert abs(r.mean().item() + 0.05) < 0.02


def test_bad_config_and_actions_are_refused():
    with pytest.raises(ValueError, match="alpha"):
        GameConfig(alpha=1.5)
    game = _game(PATH3)
    game.reset()
    with pytest.raises(ValueError, match="shape"):
        game.step(torch.zeros(5, dtype=torch.long))


def test_stance_value_matches_the_games_rewards_and_breaks_even_at_two_thirds():
    # a star: agent 0 sees k leaves; truth 1; agent 0's stance is right w.p. q, each leaf speaks w.p. s and then
    # agrees with agent 0 w.p. p; the mean of agent 0's reward over many games is stance_value's closed form
    import numpy as np

    from repro.papers.opinion.game import break_even, break_even_alpha, stance_value

    k, n_games, q, s, p = 5, 4000, 0.7, 0.6, 0.55
    star = from_networkx(nx.star_graph(k))
    rng = np.random.default_rng(0)
    for alpha in (0.0, 0.25, 1.0):
        game = _game(star, n_games=n_games, alpha=alpha)
        game.reset(truth=torch.ones(n_games, dtype=torch.long))
        centre = rng.random(n_games) < q  # right (1) or wrong (0)
        own = np.where(centre, 1, 0)
        leaves = np.where(rng.random((n_games, k)) < s,
                          np.where(rng.random((n_games, k)) < p, own[:, None], 1 - own[:, None]), WAIT)
        actions = torch.as_tensor(np.concatenate([own[:, None], leaves], 1).reshape(-1))
        _, r, _ = game.step(actions)
        got = r.reshape(n_games, k + 1)[:, 0]
        want = stance_value(game.cfg, q, p, s)
        assert abs(got.mean().item() - want) < 3 * got.std().item() / math.sqrt(n_games) + 1e-6, alpha
    cfg = GameConfig()
    assert break_even(cfg) == pytest.approx((2 / 3, 2 / 3))
    assert stance_value(GameConfig(alpha=0.0), 0.5, 2 / 3) == pytest.approx(0.0, abs=1e-12)
    assert stance_value(GameConfig(alpha=0.0), 0.5, 0.6) < 0 < stance_value(GameConfig(alpha=0.0), 0.5, 0.7)
    # an informed honest agent among honest informed ones (sigma 1): right w.p. Phi(1/2) = 0.691 > 2/3, but two of
    # them agree w.p. 0.691^2 + 0.309^2 = 0.573 < 2/3: a first-round stance beats waiting only above alpha ~0.73
    q1 = 0.5 * (1 + math.erf(0.5 / math.sqrt(2)))
    a_star = break_even_alpha(cfg, q1, q1 ** 2 + (1 - q1) ** 2, speaking=0.7)
    assert stance_value(GameConfig(alpha=a_star), q1, q1 ** 2 + (1 - q1) ** 2, 0.7) == pytest.approx(0.0, abs=1e-12)
    assert 0.72 < a_star < 0.73
    assert math.isnan(break_even_alpha(cfg, 0.9, 0.9))  # both terms pay: a stance wins at every alpha
