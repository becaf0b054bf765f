"""Train, evaluate and aggregate the opinion-dynamics experiment (paper 5, arXiv 2606.07487).

The grid: graph family (``static``: one scale-free graph per seed, the same in every episode;
``dynamic``: one camp network per seed whose ties switch between interacting and silent within each
episode by the reference's two-state chain, game G6; at small both families have the same number of
nodes, so that the comparison of the two is one of dynamics and topology, not of size) x alpha (the
truth weight; low alpha = high conformity) x seed.

Choices the reference leaves open for the dynamic family (ours; its q comes from the Hadza data, its
r is a free parameter whose value sits in a config folder the index does not hold): q = 0.5 for a
tie inside a camp and 0.2 for a tie between camps (a camp tie then interacts in 70% of rounds, a
bridge in 35%: 1 - (1 - q) e^(-q r)), r = 1 (a tie's state keeps e^-1 = 0.37 of its correlation from
one round to the next). The earlier protocol (a new camp network at every episode, every tie
interacting at every round) stays as a variant: ``family: {rewire: true, switch_rate: null}``. Per cell the parameter-shared recurrent graph-attention agent
(:mod:`repro.rl.marl`) is trained with other-play (``marl``), and at the ablation's alphas also
without it (``marl_noop``); the scripted baselines of :mod:`repro.papers.opinion.baselines` play
the same evaluation games (same graphs, truths and signals: the evaluation seed leaves the method
out).

Metrics of one evaluation (means over the evaluation games; each game's truth alternates 0, 1 so
that the labels are balanced):

- ``accuracy``: share of agents whose final stance is the truth (waiting counts as wrong).
- ``agreement``: weighted share of ties whose two final stances agree (neither waiting).
- ``lying_rate`` (learned agents): share of non-waiting stances, over all steps, that differ from
  the agent's belief (the argmax of its belief probe, trained on the truth on a detached state).
- ``contrary_rate`` (every method): share of informed agents' non-waiting stances that differ from
  the sign of their private posterior (G5): the exact, game-exposed measure.
- ``label_bias``: |P(final stance = 1) - P(truth = 1)| over non-waiting agents: a label convention
  (everyone says 1 whatever the truth) gives up to 1/2; other-play should remove it.

A rate over nobody is undefined, NaN in the record (null in JSON), never 0: the label bias when every
agent ends waiting, the lying rate when no stance is taken, the contrary rate when no informed agent
takes one (always at alpha = 0, where nobody is informed), the agreement of a game without a seen tie
(left out of the mean over games). :func:`aggregate` averages each over the seeds where it is defined
and counts them; its per-seed samples keep an undefined seed as null, which the claims leave out.
- attention (learned, static family): per node, the mean over its out-ties of alpha_ij * d_i
  (attention over the uniform 1 / d_i, so uniform attention gives 1 everywhere), and its Spearman
  correlation with in-degree, eigenvector centrality and PageRank, on the training graph and on
  networkx's real graphs (and, under ``source: remote``, on the fetched edge list, where it is also
  compared with the held-out edge weights: :func:`weight_rhos`); the untrained policy of the same
  seed is the floor. The agents always play on the topology (weights 1), as the reference's agents
  read ties only.

Training diagnostics (``record["training"]["curves"]``, one row per PPO iteration, summarised by
:func:`training_curves` into ``reports/opinion_training.md``): the batch's mean episode return, the
policy entropy, the share of agents whose last action is wait, value loss and approximate KL. On one
seed at the small preset's settings (lr 3e-3, 2 epochs x 2 minibatches, 8 games, dynamic family):
at alpha = 1 the policy first collapses to waiting (entropy 1.10 -> 0.34, 92% wait by iteration 10),
then recovers to speaking (wait 10% at iteration 40, 1-3% from iteration 90, return -0.68 -> ~1.5),
so 30 iterations stop in the middle of the recovery (static family, 100 nodes, alpha = 1: 87% wait at
iteration 10, 17% at 30, 2% at 40, return 1.05 at 30 and a plateau of ~1.5-1.7 from ~40 to 60, where
entropy is 0.07: hence 60 iterations at small); at alpha = 0.25 it collapses to waiting for
good (entropy < 0.01 by iteration 30, return 0), and neither ent_coef 0.05 nor lr 1e-3 changes that
within 80 iterations. Waiting pays 0 while a wrong stance or a disagreeing neighbour costs twice
what a right one earns (G3): a stance's truth term pays above q = 2/3 correct, its conformity term
above p = 2/3 agreeing speakers (:func:`repro.papers.opinion.game.break_even`). An informed honest
agent is right w.p. Phi(1/2) = 0.691 but two of them agree w.p. 0.573, so with 70% informed honest
neighbours a first-round stance beats waiting only above alpha = 0.725
(:func:`~repro.papers.opinion.game.break_even_alpha`; 0.818 against the untrained uniform policy's
neighbours). Silence is not the game's best outcome: at alpha = 0.25 the scripted DeGroot, majority
and Bayes-honest profiles earn 1.17-1.77 per agent and episode against silence's 0 (small build), and
a lone informed agent speaking honestly among silent ones gains alpha * 0.0074 per step, so silence
is not even an exact equilibrium; it is the trap that a learner starting from random neighbours
(p = 1/2 < 2/3) falls into. The reference code (flipbagels/OpiniMARL, read in the search index: its
environment, train and eval modules) has the same reward, and trains with curricula, now ours too
(:mod:`repro.papers.opinion.curriculum`: the informed share decays from 1, ties are dropped at random
early on, the learning rate anneals to 0, and at alpha = 0 the truth term is mixed into the training
reward with weight 0.05 -> 0 over the first half); evaluation samples actions, as the reference's.
Measured with them (small, 6 seeds, final wait share static / dynamic): 0.99 / 0.99 at alpha 0, 0.62 /
0.96 at 0.25, 0.26 / 0.42 at 0.5, 0.01 / 0.05 at 1 (without: 1.00 / 1.00, 0.97 / 1.00, 0.52 / 0.45,
0.00 / 0.13). The curricula let three of six static seeds speak at alpha 0.25 (wait 0.16-0.45) and four at
0.5; the small dynamic networks and alpha = 0 still end silent, and the per-iteration curves show every
low-alpha run collapsing to waiting within ~15 iterations first (static 0.25: 98% waiting at iteration
14, 65% at 59 and still falling). Re-scoring the same policies greedily moves these shares by <= 0.03
(<= 0.06 for the earlier build's): the change is the curricula's, not the evaluation's. Deviations from the reference's training that
remain: q0 (its PERCOLATION_PROB_INIT, not in the index; ours 0.5), no value-loss clipping, a
cross-entropy belief probe (its: squared error), one episode per rollout, and its agents see agent ids.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from repro.claims import sample
from repro.papers.opinion.baselines import create_baseline, play_scripted
from repro.papers.opinion.curriculum import Curriculum
from repro.papers.opinion.game import EDGE_DIM, OWN_DIM, WAIT, GameConfig, OpinionGame
from repro.papers.opinion.graphs import Graph, centrality, hunter_gatherer, real_graph, scale_free
from repro.rl.marl import RecurrentGraphPolicy, rollout, train_ippo
from repro.rl.ppo import PPOConfig
from repro.seeding import torch_generator
from repro.stats.rank import spearman

__all__ = ["FamilyConfig", "TrainConfig", "graph_sampler", "train_agent", "evaluate_agent", "evaluate_baselines",
           "train_and_evaluate", "VARIANTS", "CURVES", "training_curves",
           "outcome", "aggregate", "CENTRALITIES", "weight_rhos", "MEASURED_BY", "UNDEFINABLE", "table1"]

log = logging.getLogger(__name__)
CENTRALITIES = ("degree", "eigenvector", "pagerank")


@dataclass(frozen=True)
class FamilyConfig:
    """Graph families: ``static`` scale-free graphs, ``dynamic`` camp networks whose ties switch within an episode."""

    static_nodes: int = 200
    """nodes of the scale-free graph (spec: 200 to 1,000)"""
    static_m: int = 2
    """Barabási-Albert ties per new node"""
    dynamic_nodes: int = 24
    """agents of a camp network (the paper's Hadza network has 37)"""
    camp_size: float = 6.0
    bridge_p: float = 0.3
    camp_q: float = 0.5
    """stationary interaction probability of a tie inside a camp (G6's q; the reference reads it from the Hadza data)"""
    bridge_q: float = 0.2
    """the same for a tie between two camps"""
    switch_rate: float | None = 1.0
    """G6's r, the rate at which a tie switches (None: every tie interacts at every round)"""
    rewire: bool = False
    """draw a new camp network at every episode (the earlier protocol) instead of one per seed unit"""

    def __post_init__(self) -> None:
        for key in ("camp_q", "bridge_q"):
            if not 0.0 <= getattr(self, key) <= 1.0:
                raise ValueError(f"opinion family: {key} must lie in [0, 1], got {getattr(self, key)}")
        if self.switch_rate is not None and not self.switch_rate > 0:
            raise ValueError(f"opinion family: switch_rate must be > 0 or null, got {self.switch_rate}")


@dataclass(frozen=True)
class TrainConfig:
    """The agent and its PPO training (values ours where the paper gives none; config.yaml sets them)."""

    iterations: int = 100
    n_games: int = 16
    eval_games: int = 32
    hidden: int = 32
    lr: float = 1e-3
    ppo_epochs: int = 4
    minibatches: int = 4
    clip: float = 0.2
    gamma: float = 0.99
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    uninformed_share: float = 0.3
    graphs: tuple[str, ...] = ("karate", "les_miserables", "davis", "florentine")
    """real graphs the trained static agents' attention is read on"""
    family: FamilyConfig = field(default_factory=FamilyConfig)
    anneal_lr: bool = True
    """C4: learning rate linear to 0 over training (the reference's ANNEAL_LR path)"""
    curriculum: Curriculum = field(default_factory=Curriculum)
    """C1-C3: informed share, tie dropping, truth bonus at alpha = 0 (:mod:`repro.papers.opinion.curriculum`)"""
    eval_greedy: bool = False
    """evaluate argmax actions instead of sampled ones (the reference samples; claims use sampled)"""

    def ppo(self) -> PPOConfig:
        return PPOConfig(ppo_epochs=self.ppo_epochs, minibatches=self.minibatches, clip=self.clip, gamma=self.gamma,
                         gae_lambda=self.gae_lambda, lr=self.lr, vf_coef=self.vf_coef, ent_coef=self.ent_coef,
                         max_grad_norm=self.max_grad_norm, anneal_lr=self.anneal_lr)


def graph_sampler(family: str, fam: FamilyConfig, graph_seed: int):
    """sample_graphs(B, rng) for a family; the static graph is fixed by ``graph_seed`` (one per seed unit)."""
    if family == "static":
        g = scale_free(fam.static_nodes, fam.static_m, graph_seed)
        return lambda B, rng: [g] * B
    if family == "dynamic":
        camps = lambda rng: hunter_gatherer(fam.dynamic_nodes, rng, camp_size=fam.camp_size, bridge_p=fam.bridge_p,
                                            camp_q=fam.camp_q, bridge_q=fam.bridge_q)
        if fam.rewire:
            return lambda B, rng: [camps(rng) for _ in range(B)]
        g = camps(np.random.default_rng(graph_seed % 2**63))
        return lambda B, rng: [g] * B
    if family in ("karate", "les_miserables", "davis", "florentine"):
        g = real_graph(family)
        return lambda B, rng: [g] * B
    raise ValueError(f"opinion: unknown graph family {family!r}; known: static, dynamic, and the real graphs")


def _game(cfg: TrainConfig, family: str, alpha: float, other_play: bool, n_games: int, *, graph_seed: int,
          game_seed: int) -> OpinionGame:
    switch = cfg.family.switch_rate if family == "dynamic" else None
    gc = GameConfig(alpha=alpha, uninformed_share=cfg.uninformed_share, other_play=other_play, switch_rate=switch)
    return OpinionGame(gc, graph_sampler(family, cfg.family, graph_seed), n_games, game_seed)


def _balanced_truth(n_games: int) -> torch.Tensor:
    return torch.arange(n_games) % 2


def train_agent(cfg: TrainConfig, family: str, alpha: float, *, other_play: bool, seed: int, graph_seed: int
                ) -> tuple[RecurrentGraphPolicy, list[dict[str, float]]]:
    """Train the shared recurrent graph-attention policy by PPO on the family's games."""
    policy = RecurrentGraphPolicy(OWN_DIM, EDGE_DIM, 3, 2, hidden=cfg.hidden, seed=seed)
    game = _game(cfg, family, alpha, other_play, cfg.n_games, graph_seed=graph_seed, game_seed=seed + 1)
    final = 0.0 if alpha == 0 else 1.0 - cfg.uninformed_share  # G1's informed share, the curriculum's end point
    steps = []

    def set_curriculum(it: int) -> None:
        step = cfg.curriculum.at(it, cfg.iterations, alpha, final)
        game.set_curriculum(step.informed_share, step.keep_prob, step.truth_bonus)
        steps.append({"informed_share": final if step.informed_share is None else step.informed_share,
                      "keep_prob": step.keep_prob, "truth_bonus": step.truth_bonus})

    history = train_ippo(policy, game, cfg.ppo(), iterations=cfg.iterations, seed=seed + 2, on_iteration=set_curriculum)
    return policy, [{**stats, **step} for stats, step in zip(history, steps)]


def _share(hits: torch.Tensor, among: torch.Tensor) -> float:
    """The share of ``among`` that ``hits``; NaN (undefined, never 0) when ``among`` is empty."""
    n = int(among.sum())
    return (hits & among).sum().item() / n if n else float("nan")


def outcome(game: OpinionGame, stances: torch.Tensor, belief: torch.Tensor | None = None) -> dict[str, float]:
    """The metrics of one batch of played episodes; ``stances`` (T, M) in game labels, ``belief`` (T, M) P(y=1).

    A rate over nobody is NaN (missing), never 0: the label bias when no agent ends with a stance, the
    contrary rate when no informed agent takes one (at alpha = 0 nobody is informed), the lying rate when
    no stance is taken at all, the agreement when no game has a seen tie.
    """
    final = stances[-1]
    y = game.truth[game.game]
    agreement = game.agreement(final)
    out = {"accuracy": (final == y).float().mean().item(),
           "agreement": agreement.nanmean().item(),
           "wait_rate": (final == WAIT).float().mean().item()}
    spoke = final < WAIT
    out["label_bias"] = (abs((final[spoke] == 1).float().mean() - (y[spoke] == 1).float().mean()).item()
                         if spoke.any() else float("nan"))
    said = stances < WAIT
    private = (game.posterior > 0.5).long()[None].expand_as(stances)
    out["contrary_rate"] = _share(stances != private, game.informed[None].expand_as(stances) & said)
    if belief is not None:
        out["lying_rate"] = _share(stances != (belief > 0.5).long(), said)
    return out


def _attention_lift(game: OpinionGame, attention: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """On the (shared) graph of every game: (per node, the mean over its out-ties of alpha_ij * d_i; per edge of
    one copy, alpha_ij * d_i), both averaged over steps and games (d_i: i's in-degree; uniform attention gives 1)."""
    g = game.graph
    deg = torch.zeros(g.n_nodes).index_add(0, g.dst, torch.ones(len(g.dst)))
    lift = attention.mean(0) * deg[g.dst]  # (E,)
    n, n_edges = int(g.node_ptr[1]), int(g.edge_ptr[1])
    node = g.src % n  # every game shares the graph: fold the batch onto one copy
    tot = torch.zeros(n).index_add(0, node, lift.float())
    cnt = torch.zeros(n).index_add(0, node, torch.ones(len(node)))
    per_edge = lift.float().reshape(-1, n_edges).mean(0)  # games are concatenated copies: edge e of game b is b * E + e
    return (tot / cnt.clamp_min(1)).numpy(), per_edge.numpy()


def weight_rhos(graph: Graph, node_lift: np.ndarray, edge_lift: np.ndarray) -> dict[str, float]:
    """Attention read on a weighted graph's topology vs its held-out weights (the paper's Bluesky like-weights).

    - ``weight``: over the ties j -> i of receivers with at least two in-ties, Spearman rho of alpha_ij * d_i with
      w_ji relative to the mean weight of i's in-ties (both are 1 everywhere when attention follows the weights
      exactly as often as it is uniform; receivers with one in-tie have alpha = 1 whatever the weights);
    - ``strength``: over nodes somebody sees, rho of the node's attention lift with the total weight of its out-ties
      (how much the others like it).
    Empty on a graph whose weights are all equal.
    """
    if np.ptp(graph.weight) == 0:
        return {}
    d = np.bincount(graph.dst, minlength=graph.n)
    mean_w = np.bincount(graph.dst, weights=graph.weight, minlength=graph.n) / np.maximum(d, 1)
    multi = d[graph.dst] >= 2
    strength = np.bincount(graph.src, weights=graph.weight, minlength=graph.n)
    seen = np.bincount(graph.src, minlength=graph.n) > 0
    return {"weight": spearman(edge_lift[multi], (graph.weight / mean_w[graph.dst])[multi]),
            "strength": spearman(node_lift[seen], strength[seen])}


def _attention_rho(policy: RecurrentGraphPolicy, cfg: TrainConfig, graph: Graph, alpha: float, seed: int
                   ) -> dict[str, float]:
    """Spearman rho of the attention a node receives with its centralities (and, on a weighted graph, with the weights).

    The policy plays on the graph's topology (every weight 1, as in training: the agents see ties, not likes), so
    a weighted graph's weights are held out: what the attention recovers of them it recovers from topology alone.
    """
    topology = graph._replace(weight=np.ones_like(graph.weight))
    gc = GameConfig(alpha=alpha, uninformed_share=cfg.uninformed_share, other_play=False)
    game = OpinionGame(gc, lambda B, rng: [topology] * B, cfg.eval_games, seed)
    game.reset = _with_truth(game, _balanced_truth(cfg.eval_games))
    ro = rollout(policy, game, torch_generator(seed), greedy=cfg.eval_greedy)
    lift, edge_lift = _attention_lift(game, ro.attention)
    cent = centrality(topology)
    has = np.bincount(graph.src, minlength=graph.n) > 0  # nodes somebody sees
    out = {name: spearman(lift[has], cent[name][has]) for name in CENTRALITIES}
    return {**out, **weight_rhos(graph, lift, edge_lift)}


def _with_truth(game: OpinionGame, truth: torch.Tensor):
    reset = game.reset
    return lambda truth_=None: reset(truth)


def evaluate_agent(policy: RecurrentGraphPolicy, cfg: TrainConfig, family: str, alpha: float, *, eval_seed: int,
                   graph_seed: int, seed: int, extra_graphs: dict[str, Graph] | None = None) -> dict[str, Any]:
    """Score a trained policy on the evaluation games (game labels, other-play off, no curriculum).

    Actions are sampled from the policy with a generator seeded by ``eval_seed`` (the reference's
    evaluation samples too), or the argmax under ``cfg.eval_greedy``.

    Other-play only changes training: a policy evaluated without relabelling acts in its own labels,
    which are then the game's. The attention block is read on the family's graph (static), on
    the real graphs and on ``extra_graphs`` (the fetched edge list under ``source: remote``);
    ``untrained`` repeats it for the initial policy of the same seed (the floor).
    """
    game = _game(cfg, family, alpha, False, cfg.eval_games, graph_seed=graph_seed, game_seed=eval_seed)
    game.reset = _with_truth(game, _balanced_truth(cfg.eval_games))
    ro = rollout(policy, game, torch_generator(eval_seed), greedy=cfg.eval_greedy)
    result: dict[str, Any] = outcome(game, ro.actions, ro.belief[..., 1])
    result["mean_return"] = ro.rewards.sum(0).mean().item()
    if family == "static":
        init = RecurrentGraphPolicy(OWN_DIM, EDGE_DIM, 3, 2, hidden=cfg.hidden, seed=seed)
        result["attention"], result["attention_untrained"] = {}, {}
        graphs = {"static": scale_free(cfg.family.static_nodes, cfg.family.static_m, graph_seed),
                  **{name: real_graph(name) for name in cfg.graphs}, **(extra_graphs or {})}
        for name, graph in graphs.items():
            result["attention"][name] = _attention_rho(policy, cfg, graph, alpha, eval_seed)
            result["attention_untrained"][name] = _attention_rho(init, cfg, graph, alpha, eval_seed)
    return result


def evaluate_baselines(names: list[str], cfg: TrainConfig, family: str, alpha: float, *, eval_seed: int,
                       graph_seed: int) -> dict[str, dict[str, float]]:
    """Each scripted policy on the same evaluation games as :func:`evaluate_agent`."""
    out = {}
    for name in names:
        game = _game(cfg, family, alpha, False, cfg.eval_games, graph_seed=graph_seed, game_seed=eval_seed)
        play_scripted(create_baseline(name), game, eval_seed, truth=_balanced_truth(cfg.eval_games))
        res = outcome(game, torch.stack(game.history))
        res["mean_return"] = game.rewards_history.sum(0).mean().item()
        out[name] = res
    return out


def save_policy(policy: RecurrentGraphPolicy) -> bytes:
    buf = io.BytesIO()
    torch.save(policy.state_dict(), buf)
    return buf.getvalue()


def aggregate(records: list[dict[str, Any]], *, alphas: list[float], ablation_alphas: list[float],
              attention_alpha: float) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """metrics.json, the tidy results table and the attention table from per-(family, alpha, method, seed) records.

    Each record: {family, alpha, method, seed, <metrics>, [attention]}. Claims read per-seed samples
    (unit ``seed``; the methods and alphas of one seed index share its graph and evaluation games). A rate
    that is undefined for a seed (NaN: no denominator, :func:`outcome`) stays missing: means over seeds
    are over the seeds where it is defined, with their count beside them (``n_seeds``, ``n_with``,
    ``n_without``), and in a per-seed sample the seed's value is null, which the claims leave out.
    """
    rows = [{k: v for k, v in r.items() if not k.startswith("attention")} for r in records]
    table = pd.DataFrame(rows).sort_values(["family", "method", "alpha", "seed"]).reset_index(drop=True)
    metrics: dict[str, Any] = {"alphas": alphas, "summary": {}, "conformity": {}}
    for (family, method, alpha), grp in table.groupby(["family", "method", "alpha"]):
        node = metrics["summary"].setdefault(family, {}).setdefault(method, {})
        keys = [k for k in ("accuracy", "agreement", "contrary_rate", "label_bias") if k in grp]
        node[f"alpha{alpha:g}"] = {**{k: float(grp[k].mean()) for k in keys},
                                   "n_seeds": {k: int(grp[k].notna().sum()) for k in keys}}

    def per_seed(family: str, method: str, alpha: float, col: str) -> pd.Series:
        sel = table[(table.family == family) & (table.method == method) & (table.alpha == alpha)]
        return sel.set_index("seed")[col].sort_index()

    positive = sorted(a for a in alphas if a > 0)
    lo, hi = (positive[0], positive[-1]) if len(positive) >= 2 else (None, None)
    if lo is not None:
        losses = {}
        for family in sorted(table.family.unique()):
            if not ((table.family == family) & (table.method == "marl")).any():
                continue
            acc_hi, acc_lo = per_seed(family, "marl", hi, "accuracy"), per_seed(family, "marl", lo, "accuracy")
            loss = acc_hi - acc_lo
            losses[family] = loss
            node = metrics["conformity"][family] = {"alpha_low": lo, "alpha_high": hi}
            node["accuracy_loss"] = _sample(loss, "seed")
            lie_lo, lie_hi = per_seed(family, "marl", lo, "lying_rate"), per_seed(family, "marl", hi, "lying_rate")
            node["lying_gain"] = _sample(lie_lo - lie_hi, "seed")
            ag_lo, ag_hi = per_seed(family, "marl", lo, "agreement"), per_seed(family, "marl", hi, "agreement")
            node["agreement_gain"] = _sample(ag_lo - ag_hi, "seed")
            # the final wait share: the claims file's diagnostic of the silence at low alpha
            for key, col in (("accuracy_by_alpha", "accuracy"), ("wait_by_alpha", "wait_rate")):
                node[key] = {f"alpha{a:g}": _sample(per_seed(family, "marl", a, col), "seed") for a in alphas}
        if {"static", "dynamic"} <= losses.keys():
            gap = losses["static"] - losses["dynamic"]
            metrics["conformity"]["loss_static_minus_dynamic"] = _sample(gap, "seed")
    # other-play ablation: label bias without minus with other-play, per seed, at each ablation alpha; a seed
    # whose agents never speak on one side has no label bias there, and no reduction
    metrics["other_play"] = {}
    for family in sorted(table.family.unique()):
        for a in ablation_alphas:
            with_op, without = per_seed(family, "marl", a, "label_bias"), per_seed(family, "marl_noop", a, "label_bias")
            if len(with_op) and len(without):
                metrics["other_play"][f"{family}_alpha{a:g}"] = {
                    "label_bias_reduction": _sample(without - with_op, "seed"),
                    "label_bias_with": float(with_op.mean()), "label_bias_without": float(without.mean()),
                    "n_with": int(with_op.notna().sum()), "n_without": int(without.notna().sum())}
    # attention vs centrality (static family's agents at attention_alpha)
    att_rows = []
    for r in records:
        if r["method"] == "marl" and r["family"] == "static" and "attention" in r:
            for which in ("attention", "attention_untrained"):
                for graph, rhos in r[which].items():
                    for c, rho in rhos.items():
                        att_rows.append({"alpha": r["alpha"], "seed": r["seed"], "graph": graph, "centrality": c,
                                         "policy": "trained" if which == "attention" else "untrained", "rho": rho})
    att = pd.DataFrame(att_rows, columns=["alpha", "seed", "graph", "centrality", "policy", "rho"])
    # per centrality and graph, the per-seed rho of the trained (attention) and untrained policy (attention_untrained)
    for root, policy in (("attention", "trained"), ("attention_untrained", "untrained")):
        metrics[root] = {}
        for (c, graph), grp in att[(att.alpha == attention_alpha) & (att.policy == policy)].groupby(["centrality", "graph"]):
            metrics[root].setdefault(c, {})[graph] = _sample(grp.set_index("seed")["rho"], "seed")
    sel = att[(att.alpha == attention_alpha) & (att.policy == "trained")]
    # pooled over graphs: per seed, the mean rho over the graphs where it is defined (one unit per seed;
    # a per-graph check of 5 graphs needs 8 seeds at 95% with Bonferroni)
    metrics["attention_mean_over_graphs"] = _over_graphs(sel)
    metrics["attention_untrained_mean_over_graphs"] = _over_graphs(
        att[(att.alpha == attention_alpha) & (att.policy == "untrained")])
    return metrics, table, att


def _over_graphs(att: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per centrality, the per-seed sample of the mean rho over the graphs where it is defined (``att``: the
    attention table's rows of one alpha and policy); a seed whose every rho is undefined is a null unit."""
    return {c: _sample(grp.groupby("seed")["rho"].mean(), "seed") for c, grp in att.groupby("centrality")}


def _sample(series: pd.Series, unit: str) -> dict[str, Any]:
    """Per-seed values as a claims sample; a seed whose value is undefined (NaN) stays, as null."""
    series = series.sort_index()
    return sample(series.to_numpy(dtype=float).tolist(), [f"seed{int(s)}" for s in series.index], unit)


VARIANTS = {"marl": True, "marl_noop": False}  # variant -> other-play during training
CURVES = ("mean_return", "entropy", "final_action2", "v_loss", "approx_kl", "lr", "informed_share", "keep_prob",
          "truth_bonus")
"""per PPO iteration: the training batch's mean episode return (with the truth bonus where set), the policy
entropy and approximate KL (old || new, k3) and value loss of the iteration's last minibatch, the share of
agents whose last action was wait (action 2), the last step's learning rate and the curriculum's settings"""


def training_curves(records: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-iteration curves of every trained agent, their summary: means over seeds at five iterations).

    The summary rows are family x alpha x method; columns give return / entropy / final wait share at
    the first iteration, 1/4, 1/2, 3/4 of the way and the last, so a plateau (or a collapse) is visible.
    """
    rows = [{"family": r["family"], "alpha": r["alpha"], "method": r["method"], "seed": r["seed"], "iteration": i,
             **{k: c[k] for k in CURVES}}
            for r in records if "curves" in r.get("training", {}) for i, c in enumerate(r["training"]["curves"])]
    curves = pd.DataFrame(rows, columns=["family", "alpha", "method", "seed", "iteration", *CURVES])
    if curves.empty:
        return curves, pd.DataFrame()
    last = int(curves.iteration.max())
    marks = sorted({0, last // 4, last // 2, 3 * last // 4, last})
    sel = curves[curves.iteration.isin(marks)]
    mean = sel.groupby(["family", "alpha", "method", "iteration"])[["mean_return", "entropy", "final_action2"]].mean()
    summary = mean.unstack("iteration")
    summary.columns = [f"{ {'final_action2': 'wait', 'mean_return': 'return'}.get(k, k)}@{i}" for k, i in summary.columns]
    return curves.sort_values(["family", "method", "alpha", "seed", "iteration"]).reset_index(drop=True), \
        summary.reset_index()


def train_and_evaluate(cfg: TrainConfig, family: str, alpha: float, variant: str, *, seed: int, graph_seed: int,
                       eval_seed: int, extra_graphs: dict[str, Graph] | None = None) -> tuple[bytes, dict[str, Any]]:
    """One cell of the grid: train the agent (with or without other-play) and score it; (weights, record).

    ``extra_graphs`` (name -> graph) join the graphs a static agent's attention is read on.
    """
    if variant not in VARIANTS:
        raise ValueError(f"opinion: unknown agent variant {variant!r}; known: {', '.join(VARIANTS)}")
    policy, history = train_agent(cfg, family, alpha, other_play=VARIANTS[variant], seed=seed, graph_seed=graph_seed)
    record = evaluate_agent(policy, cfg, family, alpha, eval_seed=eval_seed, graph_seed=graph_seed, seed=seed,
                            extra_graphs=extra_graphs)
    record["training"] = {"first_return": history[0]["mean_return"], "last_return": history[-1]["mean_return"],
                          "last_belief_loss": history[-1]["belief_loss"], "iterations": len(history),
                          "curves": [{k: stats[k] for k in CURVES} for stats in history]}
    return save_policy(policy), record


#: Quantities only some methods measure (the belief probe is the learned agents'); the others measure all.
MEASURED_BY = {"lying_rate": tuple(VARIANTS)}

#: Table 1's rates that can be undefined for a seed (no denominator): each gets the count of seeds where it is defined.
UNDEFINABLE = ("agreement", "lying_rate", "contrary_rate", "label_bias")


def table1(results: pd.DataFrame) -> pd.DataFrame:
    """Table 1: every method per family and alpha: accuracy, agreement, lying and contrary rates, label bias.

    Means over the seeds where each is defined (blank where none is), ``n_<rate>`` the count of those seeds
    (blank where the method does not measure the rate: :data:`MEASURED_BY`), ``n_seeds`` all seeds.
    """
    cols = [c for c in ("accuracy", "agreement", "lying_rate", "contrary_rate", "label_bias", "mean_return")
            if c in results]
    keys = ["family", "alpha", "method"]
    out = results.groupby(keys)[cols].mean().reset_index()
    counts = results.groupby(keys)[[c for c in UNDEFINABLE if c in results]].count().reset_index()
    for c in UNDEFINABLE:
        if c in results:
            n = counts[c].astype(float)
            out[f"n_{c}"] = n.where(out.method.isin(MEASURED_BY[c])) if c in MEASURED_BY else n
    out["n_seeds"] = results.groupby(keys).size().to_numpy()
    return out
