"""Each scripted baseline on a case where its behaviour is known in closed form."""

from __future__ import annotations

import math

import networkx as nx
import pytest
import torch

from repro.papers.opinion.baselines import BASELINES, create_baseline, play_scripted
from repro.papers.opinion.game import WAIT, GameConfig, OpinionGame
from repro.papers.opinion.graphs import from_networkx, scale_free


def _play(name, graph, n_games=64, seed=0, truth=None, **cfg):
    game = OpinionGame(GameConfig(**cfg), lambda B, rng: [graph] * B, n_games, seed)
    return play_scripted(create_baseline(name), game, seed, truth=truth)


def _acc(game, t=-1):
    return (game.history[t] == game.truth[game.game]).float()


def test_oracle_is_perfect_and_random_is_chance():
    g = scale_free(50, 2, seed=0)
    assert _acc(_play("oracle", g, alpha=0.5)).mean().item() == 1.0
    acc = _acc(_play("random", g, n_games=100, alpha=0.5)).mean().item()
    assert abs(acc - 0.5) < 4 * math.sqrt(0.25 / 5000)


def test_bayes_honest_first_round_accuracy_is_phi_half():
    # an informed honest agent is right w.p. P(s > 1/2 | y = 1) = Phi(1/2) = 0.6915 (sigma 1)
    g = scale_free(100, 2, seed=0)
    game = _play("bayes_honest", g, n_games=100, alpha=1.0, uninformed_share=0.0)
    acc = _acc(game, 0).mean().item()
    assert abs(acc - 0.6915) < 4 * math.sqrt(0.69 * 0.31 / 10_000)


def test_bayes_honest_combines_votes_as_the_exact_posterior_on_a_star():
    # star with centre 0 and 4 leaves; leaves see only the centre. At step 2 the centre's log-odds is
    # (2 s0 - 1)/2 + sum_leaves +-log(q/(1-q)): check against a direct computation
    star = from_networkx(nx.star_graph(4))
    game = _play("bayes_honest", star, n_games=200, seed=3, alpha=1.0, uninformed_share=0.0)
    q = 0.5 * (1 + math.erf(0.5 / math.sqrt(2)))
    first = game.history[0].view(200, 5)
    s0 = game.signal.view(200, 5)[:, 0]
    logit = (2 * s0 - 1) / 2 + ((first[:, 1:] == 1).sum(1) - (first[:, 1:] == 0).sum(1)) * math.log(q / (1 - q))
    expect = torch.where(logit > 0, 1, 0)
    assert torch.equal(game.history[1].view(200, 5)[:, 0], expect)
    # and pooling beats the private stance for the centre: 5 signals vs 1
    assert _acc(game, 1).view(200, 5)[:, 0].mean() > _acc(game, 0).view(200, 5)[:, 0].mean()


def test_degroot_reaches_the_mean_opinion_in_one_step_on_a_complete_graph():
    k5 = from_networkx(nx.complete_graph(5))
    game = _play("degroot", k5, n_games=50, alpha=0.5, uninformed_share=0.0)
    mean = game.posterior.view(50, 5).mean(1, keepdim=True).expand(50, 5)
    expect = torch.where(mean > 0.5, 1, torch.where(mean < 0.5, 0, WAIT)).reshape(-1)
    assert torch.equal(game.history[1], expect) and torch.equal(game.history[-1], expect)


def test_majority_adopts_the_global_majority_on_a_complete_graph():
    k7 = from_networkx(nx.complete_graph(7))  # odd: no ties among 7 informed agents
    game = _play("majority", k7, n_games=50, alpha=0.5, uninformed_share=0.0)
    first = game.history[0].view(50, 7)
    maj = ((first == 1).sum(1) > 3).long()[:, None].expand(50, 7).reshape(-1)
    assert torch.equal(game.history[1], maj)
    assert game.agreement(game.history[-1]).min().item() == 1.0


def test_voter_model_conserves_the_expected_share_on_a_regular_graph():
    # on a d-regular graph the share of 1-stances is a martingale: E[share_T] = E[share_0]
    g = from_networkx(nx.random_regular_graph(4, 40, seed=0))
    game = _play("voter", g, n_games=400, seed=2, alpha=0.5, uninformed_share=0.0)
    s0 = (game.history[0] == 1).float().view(400, 40).mean(1)
    sT = (game.history[-1] == 1).float().view(400, 40).mean(1)
    diff = sT - s0
    assert abs(diff.mean().item()) < 4 * diff.std().item() / math.sqrt(400)
    assert (game.history[-1] < WAIT).all()


def test_every_baseline_is_registered_and_refuses_other_play():
    assert set(BASELINES.names()) == {"oracle", "random", "bayes_honest", "degroot", "voter", "majority"}
    g = scale_free(20, 2, seed=0)
    with pytest.raises(ValueError, match="other_play"):
        _play("degroot", g, other_play=True)
    with pytest.raises(ValueError, match="unknown opinion baseline"):
        create_baseline("bayes")
