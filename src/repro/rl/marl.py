"""Parameter-shared recurrent graph-attention agents trained with PPO (independent PPO, IPPO).

Many agents on a batch of graphs act at once; all share one policy. Each agent keeps a GRU hidden
state over the episode; at each step it reads its own observation and, through one graph-attention
layer, the features of the edges that reach it (what its neighbours broadcast). A belief head reads
the hidden state *detached* (a probe: trained on an auxiliary target, it never changes the policy).

References: Schulman et al. 2017 (PPO, arXiv 1707.06347) through :func:`repro.rl.ppo.clipped_loss`
and :func:`repro.rl.ppo.gae`; de Witt et al. 2020, "Is independent learning all you need in the
StarCraft multi-agent challenge?" (arXiv 2011.09533) for parameter-shared independent PPO; the
attention score is GATv2's (Brody et al. 2022, arXiv 2105.14491, Eq. 7):
e_ij = a^T LeakyReLU(W_q h_i + W_k x_ji), alpha_ij = softmax over the in-edges of i.

Graphs are flat edge lists over all agents of all games (PyG-style batching): agent ``m`` of the
batch is node ``m``; ``src[e] -> dst[e]`` means ``dst`` sees ``src``; edges are sorted by game
(``edge_ptr``), nodes too (``node_ptr``), so a slice of games is a slice of both.

Environment protocol (what :func:`train_ippo` and :func:`rollout` call)::

    obs = env.reset()            # Obs(own=(M, d_own), edge=(E, d_edge)[, mask=(E,) bool]); env.graph: GraphBatch
    obs, reward, done = env.step(actions)    # actions (M,) long; reward (M,)
    env.aux_target               # (M,) long, the belief head's target (e.g. the truth)

Episodes have a fixed horizon ``env.horizon``; ``done`` is True after the last step. A graph whose
ties switch within an episode keeps one edge list and marks the ties each agent sees at this step in
``Obs.mask``: the attention runs over the marked in-edges only (an agent with none gets a zero
message), as a masked softmax over a fixed edge list.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import torch
from torch import nn

from repro.rl.ppo import PPOConfig, annealed_lr, clipped_loss, gae
from repro.seeding import torch_generator

__all__ = ["GraphBatch", "Obs", "scatter_softmax", "GraphAttention", "RecurrentGraphPolicy", "Rollout",
           "rollout", "train_ippo"]

log = logging.getLogger(__name__)


class GraphBatch(NamedTuple):
    """A batch of graphs as one edge list: ``src -> dst`` (dst sees src), sorted by game."""

    src: torch.Tensor  # (E,) long
    dst: torch.Tensor  # (E,) long
    node_ptr: torch.Tensor  # (B + 1,) long: nodes of game b are node_ptr[b]:node_ptr[b+1]
    edge_ptr: torch.Tensor  # (B + 1,) long

    @property
    def n_nodes(self) -> int:
        return int(self.node_ptr[-1])

    def games(self, g0: int, g1: int) -> "GraphBatch":
        """Games g0..g1-1 as a batch of their own (node indices shifted to start at 0)."""
        n0, e0, e1 = int(self.node_ptr[g0]), int(self.edge_ptr[g0]), int(self.edge_ptr[g1])
        return GraphBatch(self.src[e0:e1] - n0, self.dst[e0:e1] - n0, self.node_ptr[g0:g1 + 1] - n0,
                          self.edge_ptr[g0:g1 + 1] - e0)


class Obs(NamedTuple):
    own: torch.Tensor  # (M, d_own)
    edge: torch.Tensor  # (E, d_edge): what dst sees of src along each edge
    mask: torch.Tensor | None = None  # (E,) bool: the edges seen at this step (None: every edge)


def scatter_softmax(score: torch.Tensor, index: torch.Tensor, n: int, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax of ``score`` (E,) within each group of equal ``index`` (n groups); stable.

    With ``mask`` (E,) bool the softmax runs over the masked-in entries of each group only; the others get 0, and
    a group with none gets 0 everywhere (no NaN).
    """
    if mask is None:
        amax = torch.full((n,), -math.inf, dtype=score.dtype).scatter_reduce(0, index, score, "amax", include_self=True)
        ex = (score - amax[index]).exp()
        den = torch.zeros(n, dtype=score.dtype).index_add(0, index, ex)
        return ex / den[index]
    masked = torch.where(mask, score, torch.full_like(score, -math.inf))
    amax = torch.full((n,), -math.inf, dtype=score.dtype).scatter_reduce(0, index, masked, "amax", include_self=True)
    amax = torch.where(torch.isfinite(amax), amax, torch.zeros_like(amax))
    ex = torch.where(mask, (score - amax[index]).exp(), torch.zeros_like(score))
    den = torch.zeros(n, dtype=score.dtype).index_add(0, index, ex)
    return ex / den[index].clamp_min(torch.finfo(score.dtype).tiny)


class GraphAttention(nn.Module):
    """One GATv2-style attention over in-edges: query from the receiver's state, key/value from the edge."""

    def __init__(self, query_dim: int, edge_dim: int, hidden: int):
        super().__init__()
        self.q = nn.Linear(query_dim, hidden, bias=False)
        self.k = nn.Linear(edge_dim, hidden)
        self.v = nn.Linear(edge_dim, hidden)
        self.a = nn.Linear(hidden, 1, bias=False)

    def forward(self, h: torch.Tensor, edge: torch.Tensor, graph: GraphBatch, mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """(message (M, hidden), attention (E,)); an agent without (seen) in-edges gets a zero message."""
        score = self.a(nn.functional.leaky_relu(self.q(h)[graph.dst] + self.k(edge), 0.2))[:, 0]  # GATv2 Eq. 7; (E,)
        alpha = scatter_softmax(score, graph.dst, h.shape[0], mask)  # (E,)
        msg = torch.zeros(h.shape[0], self.v.out_features, dtype=h.dtype).index_add(0, graph.dst, alpha[:, None] * self.v(edge))
        return msg, alpha


class RecurrentGraphPolicy(nn.Module):
    """pi(a | h_t), V(h_t) and a detached belief probe, with h_t = GRU(h_{t-1}, [enc(own_t), attn(h_{t-1}, edges_t)])."""

    def __init__(self, own_dim: int, edge_dim: int, n_actions: int, n_beliefs: int, *, hidden: int = 32, seed: int):
        super().__init__()
        self.hidden = hidden
        with torch.random.fork_rng(devices=[]):  # nn defaults draw from the global RNG: seed it in isolation
            torch.manual_seed(seed % 2**63)
            self.enc = nn.Sequential(nn.Linear(own_dim, hidden), nn.Tanh())
            self.attn = GraphAttention(hidden, edge_dim, hidden)
            self.gru = nn.GRUCell(2 * hidden, hidden)
            self.actor = nn.Linear(hidden, n_actions)
            self.critic = nn.Linear(hidden, 1)
            self.belief = nn.Linear(hidden, n_beliefs)
            gen = torch_generator(seed)
            nn.init.orthogonal_(self.actor.weight, 0.01, generator=gen)  # cleanrl: near-uniform initial policy
            nn.init.zeros_(self.actor.bias)

    def initial_state(self, n: int) -> torch.Tensor:
        return torch.zeros(n, self.hidden)

    def step(self, h: torch.Tensor, obs: Obs, graph: GraphBatch) -> tuple[torch.Tensor, ...]:
        """(h_t, logits (M, A), value (M,), belief logits (M, K), attention (E,))."""
        msg, alpha = self.attn(h, obs.edge, graph, obs.mask)
        h = self.gru(torch.cat([self.enc(obs.own), msg], -1), h)
        return h, self.actor(h), self.critic(h)[:, 0], self.belief(h.detach()), alpha


@dataclass
class Rollout:
    """One batch of episodes; tensors are (T, M) over agents or (T, E) over edges."""

    graph: GraphBatch
    own: torch.Tensor  # (T, M, d_own)
    edge: torch.Tensor  # (T, E, d_edge)
    actions: torch.Tensor  # (T, M)
    logp: torch.Tensor  # (T, M)
    values: torch.Tensor  # (T, M)
    rewards: torch.Tensor  # (T, M)
    attention: torch.Tensor  # (T, E)
    belief: torch.Tensor  # (T, M, K) belief probabilities
    aux_target: torch.Tensor  # (M,)
    mask: torch.Tensor | None = None  # (T, E) bool: the edges seen at each step (None: every edge, every step)


@torch.no_grad()
def rollout(policy: RecurrentGraphPolicy, env: Any, generator: torch.Generator, *, greedy: bool = False) -> Rollout:
    """Play one batch of episodes of ``env`` with ``policy`` (sampled actions, or argmax if ``greedy``)."""
    obs = env.reset()
    graph = env.graph
    h = policy.initial_state(graph.n_nodes)
    rec: dict[str, list[torch.Tensor]] = {k: [] for k in ("own", "edge", "actions", "logp", "values", "rewards",
                                                          "attention", "belief")}
    masks: list[torch.Tensor] = []
    done = False
    while not done:
        h, logits, value, belief, alpha = policy.step(h, obs, graph)
        dist = torch.distributions.Categorical(logits=logits)
        a = logits.argmax(-1) if greedy else torch.multinomial(dist.probs, 1, generator=generator)[:, 0]
        rec["own"].append(obs.own)
        rec["edge"].append(obs.edge)
        if obs.mask is not None:
            masks.append(obs.mask)
        obs, reward, done = env.step(a)
        for k, v in (("actions", a), ("logp", dist.log_prob(a)), ("values", value), ("rewards", reward),
                     ("attention", alpha), ("belief", belief.softmax(-1))):
            rec[k].append(v)
    return Rollout(graph=graph, aux_target=env.aux_target.clone(), mask=torch.stack(masks) if masks else None,
                   **{k: torch.stack(v) for k, v in rec.items()})


def _replay(policy: RecurrentGraphPolicy, ro: Rollout, g0: int, g1: int) -> tuple[torch.Tensor, ...]:
    """Re-run the policy over games g0..g1-1 of a rollout: (logp, entropy, value, belief logits), each (T, m)."""
    graph = ro.graph.games(g0, g1)
    n0, n1 = int(ro.graph.node_ptr[g0]), int(ro.graph.node_ptr[g1])
    e0, e1 = int(ro.graph.edge_ptr[g0]), int(ro.graph.edge_ptr[g1])
    h = policy.initial_state(n1 - n0)
    out: list[tuple[torch.Tensor, ...]] = []
    for t in range(ro.own.shape[0]):
        mask = None if ro.mask is None else ro.mask[t, e0:e1]
        h, logits, value, belief, _ = policy.step(h, Obs(ro.own[t, n0:n1], ro.edge[t, e0:e1], mask), graph)
        dist = torch.distributions.Categorical(logits=logits)
        out.append((dist.log_prob(ro.actions[t, n0:n1]), dist.entropy(), value, belief))
    return tuple(torch.stack(x) for x in zip(*out))


def train_ippo(policy: RecurrentGraphPolicy, env: Any, cfg: PPOConfig, *, iterations: int, seed: int,
               belief_coef: float = 1.0, on_iteration: Callable[[int], None] | None = None) -> list[dict[str, float]]:
    """Train ``policy`` in place by PPO on ``iterations`` fresh batches of episodes of ``env``.

    Per iteration: one rollout (sampled actions), GAE per agent over the fixed horizon (the episode
    ends: V after the last step is 0), then ``cfg.ppo_epochs`` passes over ``cfg.minibatches``
    slices of games, each re-running the recurrent policy from the episode start (full BPTT over the
    horizon). The belief probe's cross-entropy with ``env.aux_target`` is added with ``belief_coef``;
    it reads the detached state, so it never moves the policy. Returns per-iteration statistics:
    the last minibatch's ``pg_loss``, ``v_loss``, ``entropy``, ``approx_kl`` (k3 estimate of
    KL(old || new)) and ``belief_loss``; the batch's ``mean_return`` (per agent) and
    ``final_action<k>``, the share of agents whose last action was k; ``lr``, the last step's rate.

    ``on_iteration(it)`` runs before each iteration's rollout (a curriculum sets the env there).
    With ``cfg.anneal_lr`` optimiser step s of S = iterations x ppo_epochs x minibatch steps uses
    :func:`repro.rl.ppo.annealed_lr` (linear to 0, as optax's / cleanrl's schedule).
    """
    gen = torch_generator(seed)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr, eps=1e-5)
    history = []
    step = 0
    for it in range(iterations):
        if on_iteration is not None:
            on_iteration(it)
        ro = rollout(policy, env, gen)
        adv, returns = gae(ro.rewards, ro.values, 0.0, gamma=cfg.gamma, lam=cfg.gae_lambda)  # (T, M)
        n_games = ro.graph.node_ptr.numel() - 1
        per = max(n_games // cfg.minibatches, 1)
        total_steps = iterations * cfg.ppo_epochs * len(range(0, n_games, per))
        stats: dict[str, float] = {}
        for _ in range(cfg.ppo_epochs):
            order = torch.randperm(n_games, generator=gen)  # shuffle slices of games, not agents (graphs)
            for s in range(0, n_games, per):
                g = sorted(order[s:s + per].tolist())
                blocks = _contiguous(g)
                parts = [_replay(policy, ro, a, b) for a, b in blocks]
                logp, ent, value, belief = (torch.cat([p[i] for p in parts], 1) for i in range(4))
                nodes = torch.cat([torch.arange(int(ro.graph.node_ptr[a]), int(ro.graph.node_ptr[b])) for a, b in blocks])
                old_logp = ro.logp[:, nodes].flatten()
                loss, stats = clipped_loss(logp.flatten(), old_logp, adv[:, nodes].flatten(),
                                           value.flatten(), returns[:, nodes].flatten(), ent.flatten(), cfg)
                with torch.no_grad():  # k3 estimator of KL(old || new) (Schulman's approx_kl, as cleanrl)
                    log_ratio = logp.flatten() - old_logp
                    stats["approx_kl"] = ((log_ratio.exp() - 1) - log_ratio).mean().item()
                target = ro.aux_target[nodes].expand(belief.shape[0], -1)
                b_loss = nn.functional.cross_entropy(belief.flatten(0, 1), target.flatten())
                opt.zero_grad(set_to_none=True)
                (loss + belief_coef * b_loss).backward()
                nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
                lr = annealed_lr(cfg.lr, step, total_steps) if cfg.anneal_lr else cfg.lr
                for group in opt.param_groups:
                    group["lr"] = lr
                opt.step()
                step += 1
                stats["belief_loss"] = b_loss.item()
                stats["lr"] = lr
        stats["mean_return"] = ro.rewards.sum(0).mean().item()
        final = torch.bincount(ro.actions[-1], minlength=policy.actor.out_features).float() / ro.actions.shape[1]
        stats.update({f"final_action{k}": final[k].item() for k in range(policy.actor.out_features)})
        history.append(stats)
        if it % 10 == 0 or it == iterations - 1:
            log.info("iteration %d: %s", it, {k: round(v, 4) for k, v in stats.items()})
    return history


def _contiguous(games: list[int]) -> list[tuple[int, int]]:
    """Sorted game indices as half-open runs [(a, b), ...]."""
    runs: list[tuple[int, int]] = []
    for g in games:
        if runs and runs[-1][1] == g:
            runs[-1] = (runs[-1][0], g + 1)
        else:
            runs.append((g, g + 1))
    return runs
