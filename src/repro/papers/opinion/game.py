"""The consensus and truth-finding game, vectorised in torch over many parallel games.

"Modelling Opinion Dynamics at Scale with Deep MARL" (arXiv 2606.07487); definitions from the
public code (flipbagels/OpiniMARL, JAX), as the spec's *Reference definitions* state them:

- G1 truth y ~ Bernoulli(1/2) per game; an informed agent sees s_i = y + sigma * z_i (sigma 1),
  fixed for the episode; a share ``uninformed_share`` of agents sees 0.5; at alpha = 0 nobody is
  informed.
- G2 actions: stance 0, stance 1, or wait (2); every agent starts waiting; ``horizon`` 20 steps.
- G3 reward per step r_i = alpha * truth_i + (1 - alpha) * conform_i, with truth_i = +0.1 for a
  correct stance, -0.2 for a wrong one, 0 for waiting, and conform_i the (edge-weighted) mean over
  the agents i sees of +0.1 per agreeing and -0.2 per disagreeing stance. alpha weights the truth:
  low alpha = high conformity.
- G4 other-play: each agent independently draws at each episode start whether its labels 0 and 1
  are swapped (per agent, per episode): its signal is seen as 1 - s, every stance it sees and its
  own are relabelled, and its action is relabelled back before the game applies it.
- G5 the exposed Bayesian posterior of an agent given its private signal,
  P(y = 1 | s) = sigmoid((2 s - 1) / (2 sigma^2)) (0.5 when uninformed), in the game's labels.

Choices the reference leaves open (ours)
----------------------------------------
- Waiting counts as neither agreement nor disagreement, for the agent and for a neighbour; the
  neighbour still counts in the mean's denominator. An agent nobody is seen by still sees others:
  what matters is who *it* sees (in-edges); an agent that sees nobody gets conform_i = 0.
- Observation of agent i at step t (its own labels): [s_i, informed_i, one-hot own stance (3), t / T];
  along each edge j -> i: [one-hot stance of j (3), log(1 + in-degree of j) / log(1 + N), weight].
  Degree is what a centrality-aware attention can read; it is an input, not a target.
- uninformed_share 0.3 (the spec says "a share"; not stated).

Checked against the reference code (flipbagels/OpiniMARL's ``NetworkBinary`` environment, read in
the search index): the rewards of G3 are the same (waiting scores 0 in both terms, a neighbour that
waits counts 0 and stays in the denominator); its conformity mean is over the count of neighbours
of a binary adjacency, ours is edge-weighted (the same on every graph the agents play: all are
played with weight 1, a fetched weighted edge list included); its accuracy is
``stance == truth`` per step (waiting counts as wrong), ours is that at the last step; its signal
share is 0 at alpha = 0 and ``p_signal`` otherwise, as G1. Its agents see agent ids and every
neighbour's stance (and their own); ours see edge features (stance, degree, weight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import torch

from repro.papers.opinion.graphs import Graph
from repro.rl.marl import GraphBatch, Obs

__all__ = ["GameConfig", "WAIT", "OpinionGame", "batch_graphs", "drop_ties", "private_posterior", "OWN_DIM", "EDGE_DIM",
           "stance_value", "break_even", "break_even_alpha"]

WAIT = 2
OWN_DIM = 6
EDGE_DIM = 5


@dataclass(frozen=True)
class GameConfig:
    """The game's constants (reference code values)."""

    alpha: float = 0.5
    """weight of the truth term; 1 - alpha weights conformity (G3)"""
    horizon: int = 20
    """steps per episode (reference: 20)"""
    sigma: float = 1.0
    """noise of the private signal (reference: 1)"""
    uninformed_share: float = 0.3
    """share of agents without a signal (open; ours)"""
    correct: float = 0.1
    wrong: float = -0.2
    agree: float = 0.1
    disagree: float = -0.2
    other_play: bool = False
    """relabel each agent's stances at random per episode (G4)"""

    def __post_init__(self) -> None:
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"opinion game: alpha must lie in [0, 1], got {self.alpha}")
        if not 0.0 <= self.uninformed_share <= 1.0:
            raise ValueError(f"opinion game: uninformed_share must lie in [0, 1], got {self.uninformed_share}")
        if self.horizon < 1 or self.sigma <= 0:
            raise ValueError(f"opinion game: horizon >= 1 and sigma > 0 needed, got {self.horizon}, {self.sigma}")


def drop_ties(graph: Graph, keep_prob: float, rng: np.random.Generator) -> Graph:
    """The graph with each directed tie kept independently w.p. ``keep_prob`` (the reference's percolation mask)."""
    keep = rng.random(len(graph.src)) < keep_prob
    return Graph(graph.n, graph.src[keep], graph.dst[keep], graph.weight[keep])


def batch_graphs(graphs: list[Graph]) -> tuple[GraphBatch, torch.Tensor, torch.Tensor]:
    """Concatenate graphs into one batch: (GraphBatch, edge weights (E,), in-degree of each node (M,))."""
    node_ptr = np.cumsum([0] + [g.n for g in graphs])
    edge_ptr = np.cumsum([0] + [len(g.src) for g in graphs])
    src = np.concatenate([g.src + o for g, o in zip(graphs, node_ptr[:-1])])
    dst = np.concatenate([g.dst + o for g, o in zip(graphs, node_ptr[:-1])])
    weight = np.concatenate([g.weight for g in graphs])
    degree = np.concatenate([g.in_degree() for g in graphs])
    t = lambda a: torch.as_tensor(a, dtype=torch.long)
    return (GraphBatch(t(src), t(dst), t(node_ptr), t(edge_ptr)), torch.as_tensor(weight, dtype=torch.float32),
            torch.as_tensor(degree, dtype=torch.float32))


def private_posterior(signal: torch.Tensor, informed: torch.Tensor, sigma: float) -> torch.Tensor:
    """P(y = 1 | s) for s ~ N(y, sigma^2), y ~ Bernoulli(1/2): sigmoid((2 s - 1) / (2 sigma^2)) (G5)."""
    return torch.where(informed, torch.sigmoid((2 * signal - 1) / (2 * sigma ** 2)), torch.full_like(signal, 0.5))


def stance_value(cfg: GameConfig, p_correct: float, p_agree: float, speaking: float = 1.0) -> float:
    """Expected one-step reward of taking a stance (waiting pays exactly 0), by G3.

    alpha * (correct * q + wrong * (1 - q)) + (1 - alpha) * s * (agree * p + disagree * (1 - p)), with q the
    chance the stance is the truth, s the (weighted) share of the agents one sees who speak, and p the chance
    that a speaking one says the same (a waiting one counts 0 but stays in the mean's denominator).
    """
    truth = cfg.correct * p_correct + cfg.wrong * (1 - p_correct)
    conform = speaking * (cfg.agree * p_agree + cfg.disagree * (1 - p_agree))
    return cfg.alpha * truth + (1 - cfg.alpha) * conform


def break_even(cfg: GameConfig) -> tuple[float, float]:
    """(q*, p*): the chance of being right, and of agreeing, at which a stance's term pays as much as waiting.

    -wrong / (correct - wrong) and -disagree / (agree - disagree): both 2/3 with the reference's +0.1 / -0.2.
    """
    return -cfg.wrong / (cfg.correct - cfg.wrong), -cfg.disagree / (cfg.agree - cfg.disagree)


def break_even_alpha(cfg: GameConfig, p_correct: float, p_agree: float, speaking: float = 1.0) -> float:
    """The truth weight alpha above which a stance pays more than waiting (:func:`stance_value` = 0).

    nan when the sign does not depend on alpha (both terms of one sign); 0 or 1 clip the open range.
    """
    truth = stance_value(replace(cfg, alpha=1.0), p_correct, p_agree, speaking)
    conform = stance_value(replace(cfg, alpha=0.0), p_correct, p_agree, speaking)
    if truth == conform or (truth > 0) == (conform > 0):
        return float("nan")
    return conform / (conform - truth)


class OpinionGame:
    """``n_games`` parallel games on graphs from ``sample_graphs(n_games, rng)``; the :mod:`repro.rl.marl` protocol.

    State after :meth:`reset`: ``truth`` (B,), per agent ``game`` (M,), ``signal``, ``informed``,
    ``swap`` (other-play flags), ``stance`` (game labels), ``posterior`` (G5), and ``history``
    (stances after each step, game labels).

    Training curricula (:mod:`repro.papers.opinion.curriculum`) act through :meth:`set_curriculum`: the
    informed share of the next resets, the probability of keeping each tie at a reset (dropped ties are
    gone for the episode: unseen and out of the conformity mean), and the weight w of the truth term in
    the reward the game returns, r' = (1 - w) r + w * truth_i (training only: a fresh game has w = 0).
    """

    def __init__(self, cfg: GameConfig, sample_graphs: Callable[[int, np.random.Generator], list[Graph]],
                 n_games: int, seed: int):
        if n_games < 1:
            raise ValueError(f"opinion game: n_games must be >= 1, got {n_games}")
        self.cfg = cfg
        self.sample_graphs = sample_graphs
        self.n_games = n_games
        self.horizon = cfg.horizon
        self.rng = np.random.default_rng(seed)
        self.informed_share: float | None = None  # None: G1's rule (1 - uninformed_share; 0 at alpha = 0)
        self.keep_prob = 1.0
        self.truth_bonus = 0.0

    def set_curriculum(self, informed_share: float | None = None, keep_prob: float = 1.0,
                       truth_bonus: float = 0.0) -> None:
        """Settings of the next resets (informed share, tie keep probability) and of the returned reward (bonus w)."""
        if informed_share is not None and not 0.0 <= informed_share <= 1.0:
            raise ValueError(f"opinion game: informed_share must lie in [0, 1], got {informed_share}")
        if not 0.0 <= keep_prob <= 1.0 or not 0.0 <= truth_bonus <= 1.0:
            raise ValueError(f"opinion game: keep_prob and truth_bonus must lie in [0, 1], got {keep_prob}, {truth_bonus}")
        self.informed_share, self.keep_prob, self.truth_bonus = informed_share, keep_prob, truth_bonus

    # -- game state -------------------------------------------------------------------------------
    def reset(self, truth: torch.Tensor | None = None) -> Obs:
        cfg, rng, B = self.cfg, self.rng, self.n_games
        graphs = self.sample_graphs(B, rng)
        if self.keep_prob < 1.0:  # the reference's percolation: each directed tie kept w.p. keep_prob, per game
            graphs = [drop_ties(g, self.keep_prob, rng) for g in graphs]
        self.graph, self.weight, degree = batch_graphs(graphs)
        M = self.graph.n_nodes
        sizes = torch.as_tensor([g.n for g in graphs])
        self.game = torch.repeat_interleave(torch.arange(B), sizes)  # (M,)
        self.truth = torch.as_tensor(rng.integers(0, 2, size=B)) if truth is None else truth.long()
        y = self.truth[self.game].float()
        share = 1.0 if cfg.alpha == 0 else cfg.uninformed_share  # G1: at alpha = 0 nobody gets a signal
        if self.informed_share is not None:
            share = 1.0 - self.informed_share
        self.informed = torch.as_tensor(rng.random(M) >= share)
        noise = torch.as_tensor(rng.standard_normal(M), dtype=torch.float32)
        self.signal = torch.where(self.informed, y + cfg.sigma * noise, torch.full((M,), 0.5))
        self.swap = torch.as_tensor(rng.random(M) < 0.5) if cfg.other_play else torch.zeros(M, dtype=torch.bool)
        self.posterior = private_posterior(self.signal, self.informed, cfg.sigma)
        self.stance = torch.full((M,), WAIT, dtype=torch.long)
        self.history: list[torch.Tensor] = []
        self.t = 0
        n_max = max(g.n for g in graphs)
        self._edge_static = torch.stack([torch.log1p(degree[self.graph.src]) / math.log1p(n_max), self.weight], -1)
        # conformity mean: weights normalised over the agents i sees
        tot = torch.zeros(M).index_add(0, self.graph.dst, self.weight)
        self._w_norm = self.weight / tot[self.graph.dst].clamp_min(1e-12)
        return self._obs()

    def relabel(self, stance: torch.Tensor, agent: torch.Tensor | None = None) -> torch.Tensor:
        """Swap labels 0 <-> 1 where agent's other-play flag is set (wait stays wait); an involution."""
        swap = self.swap if agent is None else self.swap[agent]
        return torch.where(swap & (stance < WAIT), 1 - stance, stance)

    @property
    def aux_target(self) -> torch.Tensor:
        """The truth in each agent's own labels (the belief probe's target)."""
        return self.relabel(self.truth[self.game])

    def _obs(self) -> Obs:
        own_stance = self.relabel(self.stance)
        sig = torch.where(self.swap, 1 - self.signal, self.signal)
        t = torch.full((len(sig),), self.t / self.horizon)
        own = torch.cat([sig[:, None], self.informed.float()[:, None],
                         torch.nn.functional.one_hot(own_stance, 3).float(), t[:, None]], -1)
        seen = self.relabel(self.stance[self.graph.src], self.graph.dst)  # j's stance in i's labels
        edge = torch.cat([torch.nn.functional.one_hot(seen, 3).float(), self._edge_static], -1)
        return Obs(own, edge)

    def terms(self, stance: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(truth_i, conform_i) of Eq. G3 for stances in game labels (M,)."""
        cfg = self.cfg
        y = self.truth[self.game]
        truth = torch.where(stance == WAIT, 0.0, torch.where(stance == y, cfg.correct, cfg.wrong))
        s_i, s_j = stance[self.graph.dst], stance[self.graph.src]
        both = (s_i < WAIT) & (s_j < WAIT)
        per_edge = torch.where(both, torch.where(s_i == s_j, cfg.agree, cfg.disagree), 0.0) * self._w_norm
        conform = torch.zeros(len(stance)).index_add(0, self.graph.dst, per_edge)
        return truth, conform

    def rewards(self, stance: torch.Tensor) -> torch.Tensor:
        """r_i of Eq. G3 for stances in game labels (M,), mixed with the truth bonus when one is set."""
        truth, conform = self.terms(stance)
        r = self.cfg.alpha * truth + (1 - self.cfg.alpha) * conform
        return r if self.truth_bonus == 0 else (1 - self.truth_bonus) * r + self.truth_bonus * truth

    def step(self, actions: torch.Tensor) -> tuple[Obs, torch.Tensor, bool]:
        """Apply actions given in each agent's own labels; (obs, reward (M,), done)."""
        if actions.shape != self.stance.shape:
            raise ValueError(f"opinion game: actions must have shape {tuple(self.stance.shape)}, got {tuple(actions.shape)}")
        self.stance = self.relabel(actions.long())
        self.history.append(self.stance.clone())
        self.t += 1
        return self._obs(), self.rewards(self.stance), self.t >= self.horizon

    # -- outcomes -----------------------------------------------------------------------------
    def agreement(self, stance: torch.Tensor) -> torch.Tensor:
        """Per game: weighted share of ties j -> i whose two stances are equal and not waiting."""
        s_i, s_j = stance[self.graph.dst], stance[self.graph.src]
        agree = ((s_i == s_j) & (s_i < WAIT)).float() * self.weight
        game = self.game[self.graph.dst]
        num = torch.zeros(self.n_games).index_add(0, game, agree)
        den = torch.zeros(self.n_games).index_add(0, game, self.weight)
        return num / den.clamp_min(1e-12)
