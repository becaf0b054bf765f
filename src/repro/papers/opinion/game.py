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
- G6 dynamic networks (the reference's ``NetworkBinary`` with ``q`` and ``r``; ``switch_rate`` = r):
  each pair {i, j} of the network switches between interacting and silent by a continuous-time
  two-state chain with stationary interaction probability q_ij and total rate r (silent -> interacting
  at rate q r, back at rate (1 - q) r), read once per round of unit length. Over one round, silent ->
  interacting w.p. q (1 - e^-r) and interacting stays so w.p. q + (1 - q) e^-r; a pair silent at both
  ends interacted in between w.p. 1 - e^(-q r) / (1 - q (1 - e^-r)). The round's interaction graph
  holds the pairs that interacted at any moment of the round (at its start, its end, or in between),
  in both directions. At a reset each pair interacts w.p. q and one round is played out; after round
  t's stances the reward's conformity mean runs over round t's interaction graph, then the chain
  moves one round and the agents see the stances over the next one (the reference's order: its
  reward reads the state before the step, its observation the state after). The interaction graph
  is per round, not the union since the episode's start: the reference's ``update_interaction_network``
  ORs the pair's state at the round's two ends and the in-between visit, never the previous graph.
  Ties outside the round's graph are unseen (masked out of the attention, as the reference's
  observation code 3 is) and out of the conformity mean.

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

from repro.papers.opinion.graphs import Graph, drop_ties
from repro.rl.marl import GraphBatch, Obs

__all__ = ["GameConfig", "WAIT", "OpinionGame", "batch_graphs", "drop_ties", "switch_ties", "private_posterior",
           "OWN_DIM", "EDGE_DIM",
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
    switch_rate: float | None = None
    """r of G6: ties switch between interacting and silent within an episode (None: every tie always interacts)"""

    def __post_init__(self) -> None:
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"opinion game: alpha must lie in [0, 1], got {self.alpha}")
        if not 0.0 <= self.uninformed_share <= 1.0:
            raise ValueError(f"opinion game: uninformed_share must lie in [0, 1], got {self.uninformed_share}")
        if self.horizon < 1 or self.sigma <= 0:
            raise ValueError(f"opinion game: horizon >= 1 and sigma > 0 needed, got {self.horizon}, {self.sigma}")
        if self.switch_rate is not None and not self.switch_rate > 0:
            raise ValueError(f"opinion game: switch_rate must be > 0 (or None: static ties), got {self.switch_rate}")


def switch_ties(on: np.ndarray, q: np.ndarray, rate: float, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One round of the ties' two-state chain (G6): (interacting at the next round, interacted during this one).

    ``on`` (P,) bool: the pairs interacting now; ``q`` (P,) their stationary interaction probability; ``rate`` r;
    ``u`` (3, P) uniforms on [0, 1) (the three Bernoulli draws of the reference, one row each).
    """
    decay = math.exp(-rate)
    p_start = q * (1 - decay)  # silent -> interacting over one unit of time
    p_stay = q + (1 - q) * decay  # interacting -> interacting
    nxt = np.where(on, u[1] < p_stay, u[0] < p_start)
    # silent at both ends: it met in between unless it never left silence, w.p. exp(-q r) / P(silent -> silent)
    p_between = 1 - np.exp(-q * rate) / np.maximum(1 - p_start, 1e-300)
    between = ~on & ~nxt & (u[2] < p_between)
    return nxt, on | nxt | between


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
        self._init_ties(graphs)
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
        return self._obs()

    def _init_ties(self, graphs: list[Graph]) -> None:
        """G6 at a reset: each pair interacting w.p. q, then one round of the chain gives the first interaction graph."""
        self._pair = None
        if self.cfg.switch_rate is None:
            self._set_seen(torch.ones(len(self.graph.src), dtype=torch.bool))
            return
        if any(g.q is None for g in graphs):
            raise ValueError("opinion game: switch_rate is set but a graph has no tie probabilities q "
                             "(build it with hunter_gatherer(..., camp_q=, bridge_q=))")
        # unordered pairs over the whole batch: game b's nodes are offset, so pairs never cross games
        n_all = int(self.graph.n_nodes)
        lo = np.minimum(self.graph.src.numpy(), self.graph.dst.numpy())
        hi = np.maximum(self.graph.src.numpy(), self.graph.dst.numpy())
        _, first, self._pair = np.unique(lo * n_all + hi, return_index=True, return_inverse=True)
        self._pair = self._pair.reshape(-1)
        self._q = np.concatenate([g.q for g in graphs])[first]
        on = self.rng.random(len(first)) < self._q
        self._on, seen = switch_ties(on, self._q, self.cfg.switch_rate, self.rng.random((3, len(first))))
        self._set_seen(torch.as_tensor(seen[self._pair]))

    def _advance_ties(self) -> None:
        """G6 between two rounds: the next interaction graph (no-op on static ties)."""
        if self._pair is None:
            return
        self._on, seen = switch_ties(self._on, self._q, self.cfg.switch_rate, self.rng.random((3, len(self._q))))
        self._set_seen(torch.as_tensor(seen[self._pair]))

    def _set_seen(self, seen: torch.Tensor) -> None:
        """The ties that interact this round: what the agents see and whom the conformity mean runs over."""
        self.seen = seen
        w = torch.where(seen, self.weight, torch.zeros_like(self.weight))
        tot = torch.zeros(self.graph.n_nodes).index_add(0, self.graph.dst, w)
        self._w_norm = w / tot[self.graph.dst].clamp_min(1e-12)  # conformity mean: weights normalised over i's seen ties

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
        return Obs(own, edge, None if self._pair is None else self.seen)

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
        reward = self.rewards(self.stance)  # on this round's interaction graph (G6)
        if self.t < self.horizon:  # after the last round the interaction graph stays the one its stances met on
            self._advance_ties()
        return self._obs(), reward, self.t >= self.horizon

    # -- outcomes -----------------------------------------------------------------------------
    def agreement(self, stance: torch.Tensor) -> torch.Tensor:
        """Per game: weighted share of the seen ties j -> i whose two stances are equal and not waiting.

        Seen: every tie on a static graph; under G6 the ties that interact at the current round (after an episode,
        its last round: the ties whose agreement the last reward paid for). NaN for a game without a seen tie.
        """
        s_i, s_j = stance[self.graph.dst], stance[self.graph.src]
        w = torch.where(self.seen, self.weight, torch.zeros_like(self.weight))
        agree = ((s_i == s_j) & (s_i < WAIT)).float() * w
        game = self.game[self.graph.dst]
        num = torch.zeros(self.n_games).index_add(0, game, agree)
        den = torch.zeros(self.n_games).index_add(0, game, w)
        return torch.where(den > 0, num / den.clamp_min(1e-12), torch.full_like(den, float("nan")))
