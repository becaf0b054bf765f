"""Scripted policies scored on the same games as the learned agents.

- ``bayes_honest`` (the reference's Bayesian-optimal honest agent): broadcasts the sign of its
  posterior, waiting while it is exactly 1/2. At step 1 the posterior rests on its own signal (G5);
  from step 2 on it adds, as independent votes, the first-round stances of the agents it sees,
  each correct with probability q = Phi(1 / (2 sigma)) (an honest informed agent's accuracy):
  log-odds = (2 s - 1) / (2 sigma^2) + sum_j (+-) log(q / (1 - q)). This is the exact posterior
  given its signal and those first stances when the others are honest too (first-round stances are
  then functions of independent signals); later rounds add no independent evidence it could
  use without modelling the others, so it keeps that posterior.
- ``degroot`` (DeGroot 1974; a labelled addition): opinions x_i(0) = P(y = 1 | s_i), then
  x_i <- (x_i + sum_j w_ji x_j) / (1 + sum_j w_ji); stance = sign(x - 1/2), wait at exactly 1/2.
- ``voter`` (Clifford & Sudbury 1973; an addition): step 1 the private stance (an uninformed agent
  picks at random); then each agent copies the previous stance of one agent it sees, drawn
  uniformly (keeps its own if that one waits, or it sees nobody).
- ``majority`` (an addition): step 1 the private stance (uninformed agents wait); then the weighted
  majority of its own and its neighbours' non-waiting stances; a tie keeps its stance.
- ``oracle`` (ceiling): the truth at every step. ``random`` (floor): 0 or 1 at random every step.

On a network whose ties switch (the game's G6) every rule reads only the ties seen at the step (the
round's interaction graph), as the learned agents do.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from repro.papers.opinion.game import WAIT, OpinionGame
from repro.registry import Registry

__all__ = ["BASELINES", "create_baseline", "play_scripted"]

BASELINES = Registry("opinion baseline")


def _sign(logit_or_centered: torch.Tensor) -> torch.Tensor:
    """1 where > 0, 0 where < 0, WAIT where exactly 0."""
    out = torch.full(logit_or_centered.shape, WAIT, dtype=torch.long)
    out[logit_or_centered > 0] = 1
    out[logit_or_centered < 0] = 0
    return out


class Scripted:
    def reset(self, game: OpinionGame, rng: np.random.Generator) -> None:
        self.rng = rng

    def act(self, game: OpinionGame) -> torch.Tensor:  # pragma: no cover - interface
        raise NotImplementedError


@BASELINES.register("oracle")
class Oracle(Scripted):
    def act(self, game):
        return game.truth[game.game].clone()


@BASELINES.register("random")
class RandomStance(Scripted):
    def act(self, game):
        return torch.as_tensor(self.rng.integers(0, 2, size=len(game.stance)))


@BASELINES.register("bayes_honest")
class BayesHonest(Scripted):
    def reset(self, game, rng):
        super().reset(game, rng)
        self.logit = torch.logit(game.posterior.double())  # (2s - 1) / (2 sigma^2), 0 when uninformed

    def act(self, game):
        if game.t == 1:  # after the first round: add the first stances of the agents seen as votes
            q = 0.5 * (1 + math.erf(1 / (2 * game.cfg.sigma) / math.sqrt(2)))  # Phi(1 / (2 sigma))
            first = game.history[0][game.graph.src]
            vote = torch.where((first == WAIT) | ~game.seen, 0.0, torch.where(first == 1, 1.0, -1.0)).double()
            self.logit = self.logit + torch.zeros_like(self.logit).index_add(0, game.graph.dst, vote) * math.log(q / (1 - q))
        return _sign(self.logit)


@BASELINES.register("degroot")
class DeGroot(Scripted):
    def reset(self, game, rng):
        super().reset(game, rng)
        self.x = game.posterior.double()

    def act(self, game):
        if game.t > 0:
            g, w = game.graph, torch.where(game.seen, game.weight, 0.0).double()
            num = self.x + torch.zeros_like(self.x).index_add(0, g.dst, w * self.x[g.src])
            self.x = num / (1 + torch.zeros_like(self.x).index_add(0, g.dst, w))
        return _sign(self.x - 0.5)


@BASELINES.register("voter")
class Voter(Scripted):
    def act(self, game):
        M = len(game.stance)
        if game.t == 0:
            s = _sign(game.posterior - 0.5)
            coin = torch.as_tensor(self.rng.integers(0, 2, size=M))
            return torch.where(s == WAIT, coin, s)
        g = game.graph
        # one uniform in-neighbour per agent: random keys, the edge with the largest key per dst wins
        key = torch.as_tensor(self.rng.random(len(g.src)))
        key = torch.where(game.seen, key, -2.0)  # an unseen tie is never drawn
        best = torch.full((M,), -1.0, dtype=key.dtype).scatter_reduce(0, g.dst, key, "amax", include_self=True)
        chosen = (key == best[g.dst]) & game.seen
        pick = torch.full((M,), -1, dtype=torch.long)
        pick[g.dst[chosen]] = g.src[chosen]
        prev = game.stance
        copied = torch.where(pick >= 0, prev[pick.clamp_min(0)], prev)
        return torch.where(copied == WAIT, prev, copied)


@BASELINES.register("majority")
class Majority(Scripted):
    def act(self, game):
        if game.t == 0:
            return _sign(game.posterior - 0.5)
        g, prev = game.graph, game.stance
        vote = lambda s: torch.where(s == WAIT, 0.0, torch.where(s == 1, 1.0, -1.0))
        w = torch.where(game.seen, game.weight, 0.0)
        tally = vote(prev) + torch.zeros(len(prev)).index_add(0, g.dst, w * vote(prev[g.src]))
        new = _sign(tally)
        return torch.where(new == WAIT, prev, new)


def create_baseline(name: str) -> Scripted:
    return BASELINES.create(name)


def play_scripted(policy: Scripted, game: OpinionGame, seed: int, truth: torch.Tensor | None = None) -> OpinionGame:
    """Play one batch of episodes of ``game`` with a scripted policy (game labels: no other-play)."""
    if game.cfg.other_play:
        raise ValueError("opinion baselines act in the game's labels: play them with other_play off")
    game.reset(truth)
    policy.reset(game, np.random.default_rng(seed))
    rewards = []
    done = False
    while not done:
        _, r, done = game.step(policy.act(game))
        rewards.append(r)
    game.rewards_history = torch.stack(rewards)  # (T, M)
    return game
