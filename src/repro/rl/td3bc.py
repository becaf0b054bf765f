"""TD3+BC: offline TD3 with a behaviour-cloning term (Fujimoto & Gu 2021, "A Minimalist Approach to
Offline Reinforcement Learning", NeurIPS 2021, arXiv 2106.06860), the model-free offline baseline.

Definitions (the paper's Eq. 3 and Algorithm 1, and the authors' public code ``sfujim/TD3_BC``):

- states are standardised by the dataset's mean and standard deviation (``std + 1e-3``); the policy
  acts on standardised states; actions live in ``[-1, 1]`` (``max_action = 1``);
- twin critics ``Q1, Q2`` (MLPs ``s, a -> 256 -> 256 -> 1``, ReLU) regress on the clipped double-Q
  target ``y = r + gamma (1 - d) min_i Q'_i(s', clip(pi'(s') + clip(eps, -c, c), -1, 1))``,
  ``eps ~ N(0, 0.2^2)``, ``c = 0.5``, loss ``MSE(Q1, y) + MSE(Q2, y)``;
- every ``policy_delay = 2`` critic updates the actor (``s -> 256 -> 256 -> a``, ReLU, tanh) takes one step on
  ``-lambda mean Q1(s, pi(s)) + mean (pi(s) - a)^2`` with ``lambda = alpha / mean |Q1(s, pi(s))|``
  (detached, over the minibatch), ``alpha = 2.5``, and both target networks move by ``tau = 0.005``;
- Adam with learning rate 3e-4 for actor and critics, minibatch 256, discount 0.99, no reward scaling.

Why our own code and not a library: d3rlpy (the well-kept offline-RL library with TD3+BC) pins
``gymnasium==1.0.0`` and pulls the old ``gym`` 0.26 in its 2.8.1 release, which would downgrade the
project's gymnasium 1.x that the classic-control tasks run on; stable-baselines3 has TD3 and SAC but
only as online agents (they learn from environment interaction, which the offline datasets of gtp
do not allow). TD3+BC is a few dozen lines on top of TD3, so it is written here from the
definitions above (torch only), in the shared package because any offline-RL paper can use it.

Deviations from the reference definitions (each a config field, the reference value its default):

- ``steps``: the reference trains 1,000,000 gradient steps; the gtp presets train far fewer
  (chosen from the training diagnostics below, see ``config.yaml``), on datasets of 10^4-10^5
  transitions instead of D4RL's 10^6.
- ``hidden``: 256 in the reference; the smoke preset uses a narrower net for speed.
- ``log_every``: our addition, the interval of the training diagnostics.

Diagnostics (:func:`fit_td3bc` returns them, one row per ``log_every`` updates, each a mean over its
window): the critic loss, ``Q1`` on the dataset's pairs ``(s, a)`` and on ``(s, pi(s))``, ``lambda``,
the BC term ``mean (pi(s) - a)^2`` and the actor's Q term ``lambda mean Q1(s, pi(s))``; a step count
is judged adequate when the critic loss and the Q values have levelled off and the BC term is stable.

Online TD3 (:func:`fit_td3_online`): the same networks, target and update (one ``_Learner`` for both),
with TD3's actor loss ``-mean Q1(s, pi(s))`` and no state standardisation, learning from its own
interaction; gtp uses its replay buffer as a MuJoCo task's behaviour dataset.

Randomness comes from ``seed`` alone (initial weights from a seeded fork of the global torch RNG,
minibatches and target noise from a ``torch.Generator``); the global RNG is left as it was.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from repro.seeding import torch_generator

log = logging.getLogger(__name__)

__all__ = ["TD3BCConfig", "Actor", "TwinCritic", "TD3BCPolicy", "actor_loss", "critic_target", "fit_td3bc", "fit_td3bc_critic",
           "fit_td3_online", "save_policy", "load_policy", "load_critic"]


@dataclass(frozen=True)
class TD3BCConfig:
    """Hyper-parameters of TD3+BC (the reference values are the defaults)."""

    steps: int = 1_000_000
    """critic updates (gradient steps); the actor takes one every ``policy_delay``"""
    batch: int = 256
    """minibatch size"""
    hidden: int = 256
    """width of the two hidden layers of actor and critics"""
    lr: float = 3e-4
    """Adam learning rate of actor and critics"""
    gamma: float = 0.99
    """discount"""
    tau: float = 0.005
    """target-network update rate"""
    policy_noise: float = 0.2
    """sd of the target policy smoothing noise (action units, max_action = 1)"""
    noise_clip: float = 0.5
    """the smoothing noise is clipped to [-noise_clip, noise_clip]"""
    policy_delay: int = 2
    """critic updates per actor (and target) update"""
    alpha: float = 2.5
    """weight of the Q term relative to BC: lambda = alpha / mean |Q(s, pi(s))|"""
    normalize: bool = True
    """standardise states by the dataset's mean and sd (+ 1e-3)"""
    log_every: int = 1000
    """updates per row of the training diagnostics"""

    def __post_init__(self):
        checks = {"steps": self.steps >= 1, "batch": self.batch >= 1, "hidden": self.hidden >= 1, "lr": self.lr > 0,
                  "gamma": 0 <= self.gamma < 1, "tau": 0 < self.tau <= 1, "policy_noise": self.policy_noise >= 0,
                  "noise_clip": self.noise_clip >= 0, "policy_delay": self.policy_delay >= 1, "alpha": self.alpha >= 0,
                  "log_every": self.log_every >= 1}
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ValueError("TD3BCConfig: impossible " + ", ".join(f"{k}={getattr(self, k)!r}" for k in bad)
                             + " (need steps, batch, hidden, policy_delay, log_every >= 1; lr > 0; 0 <= gamma < 1;"
                             " 0 < tau <= 1; policy_noise, noise_clip, alpha >= 0)")


def _mlp(i: int, h: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, o))


class Actor(nn.Module):
    """Deterministic policy on standardised states: ``tanh(MLP(s))`` in ``[-1, 1]^A``."""

    def __init__(self, s_dim: int, a_dim: int, hidden: int):
        super().__init__()
        self.net = _mlp(s_dim, hidden, a_dim)

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.net(s))


class TwinCritic(nn.Module):
    """Two independent Q networks on ``[s, a]``: returns ``(Q1, Q2)``, each (B,)."""

    def __init__(self, s_dim: int, a_dim: int, hidden: int):
        super().__init__()
        self.q1, self.q2 = _mlp(s_dim + a_dim, hidden, 1), _mlp(s_dim + a_dim, hidden, 1)

    def forward(self, s: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.cat([s, a], -1)
        return self.q1(x)[..., 0], self.q2(x)[..., 0]

    def first(self, s: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """``Q1`` alone (the actor's loss uses no other: the reference's ``Critic.Q1``)."""
        return self.q1(torch.cat([s, a], -1))[..., 0]


class TD3BCPolicy(nn.Module):
    """The trained actor with the state normaliser it was trained under: ``act(obs)`` is one forward pass."""

    def __init__(self, s_dim: int, a_dim: int, hidden: int):
        super().__init__()
        self.s_dim, self.a_dim, self.hidden = s_dim, a_dim, hidden
        self.actor = Actor(s_dim, a_dim, hidden)
        self.register_buffer("s_mean", torch.zeros(s_dim))
        self.register_buffer("s_std", torch.ones(s_dim))

    def normalise(self, s: torch.Tensor) -> torch.Tensor:
        return (s - self.s_mean) / self.s_std

    @torch.no_grad()
    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions (E, A) in [-1, 1] for observations (E, S)."""
        s = torch.as_tensor(np.atleast_2d(obs), dtype=torch.float32)
        return self.actor(self.normalise(s)).numpy().astype(np.float64)


def actor_loss(q_pi: torch.Tensor, pi: torch.Tensor, a: torch.Tensor, alpha: float
               ) -> tuple[torch.Tensor, dict[str, float]]:
    """TD3+BC's actor loss ``-lambda mean Q + mean (pi - a)^2`` with ``lambda = alpha / mean |Q|`` (detached),
    and its parts (``lambda``, ``bc``, ``q_term``) for the diagnostics."""
    lam = alpha / q_pi.abs().mean().detach().clamp_min(1e-12)
    bc = ((pi - a) ** 2).mean()
    q_term = lam * q_pi.mean()
    return bc - q_term, {"lambda": float(lam), "bc": float(bc.detach()), "q_term": float(q_term.detach())}


@torch.no_grad()
def critic_target(critic_t: TwinCritic, actor_t: Actor, r: torch.Tensor, s2: torch.Tensor, d: torch.Tensor,
                  cfg: TD3BCConfig, gen: torch.Generator) -> torch.Tensor:
    """Clipped double-Q target with target policy smoothing: ``r + gamma (1 - d) min_i Q'_i(s', a')``."""
    pi2 = actor_t(s2)
    eps = (torch.randn(pi2.shape, generator=gen) * cfg.policy_noise).clamp(-cfg.noise_clip, cfg.noise_clip)
    q1, q2 = critic_t(s2, (pi2 + eps).clamp(-1.0, 1.0))
    return r + cfg.gamma * (1 - d) * torch.minimum(q1, q2)


def _soft_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    with torch.no_grad():
        for p, q in zip(target.parameters(), source.parameters()):
            p.lerp_(q, tau)


def _tensors(obs, actions, rewards, next_obs, terminals, where: str) -> list[torch.Tensor]:
    """The transitions as float tensors, checked (shapes, finiteness, actions in [-1, 1], 0/1 terminals)."""
    t = [torch.as_tensor(np.asarray(x), dtype=torch.float32) for x in (obs, actions, rewards, next_obs, terminals)]
    s, a, r, s2, d = t
    M = len(s)
    if s.ndim != 2 or a.ndim != 2 or s2.shape != s.shape or not all(len(x) == M for x in t):
        raise ValueError(f"{where}: need obs (M, S), actions (M, A), rewards (M,), next_obs (M, S), terminals (M,); "
                         f"got {[tuple(x.shape) for x in t]}")
    if M < 2:
        raise ValueError(f"{where}: need at least two transitions")
    if not torch.isfinite(torch.cat([x.reshape(M, -1) for x in t], 1)).all():
        raise ValueError(f"{where}: the transitions hold NaN or infinite values")
    if a.abs().max() > 1 + 1e-6:
        raise ValueError(f"{where}: actions must lie in [-1, 1] (max_action = 1); max |a| = {float(a.abs().max()):.3g}")
    if ((d != 0) & (d != 1)).any():
        raise ValueError(f"{where}: terminals must be 0 or 1")
    return t


class _Learner:
    """One TD3 / TD3+BC update of a policy's actor and a twin critic (their target copies, Adam states and
    the minibatch / noise generator live here): the critic every call, the actor and targets every
    ``policy_delay`` calls. ``bc``: TD3+BC's actor loss (:func:`actor_loss`); otherwise TD3's ``-mean Q1``."""

    def __init__(self, policy: TD3BCPolicy, critic: TwinCritic, cfg: TD3BCConfig, seed: int, *, bc: bool):
        self.actor, self.critic, self.cfg, self.bc = policy.actor, critic, cfg, bc
        self.actor_t, self.critic_t = copy.deepcopy(self.actor), copy.deepcopy(critic)
        self.opt_a = torch.optim.Adam(self.actor.parameters(), lr=cfg.lr)
        self.opt_c = torch.optim.Adam(critic.parameters(), lr=cfg.lr)
        self.gen = torch_generator(seed + 1)
        self.calls = 0

    def update(self, s, a, r, s2, d) -> dict[str, float]:
        """One step on a minibatch of standardised transitions; the diagnostics of this step."""
        cfg = self.cfg
        self.calls += 1
        y = critic_target(self.critic_t, self.actor_t, r, s2, d, cfg, self.gen)
        q1, q2 = self.critic(s, a)
        loss_c = ((q1 - y) ** 2).mean() + ((q2 - y) ** 2).mean()
        self.opt_c.zero_grad()
        loss_c.backward()
        self.opt_c.step()
        out = {"critic_loss": float(loss_c.detach()), "q_data": float(q1.detach().mean())}
        if self.calls % cfg.policy_delay == 0:
            pi = self.actor(s)
            q_pi = self.critic.first(s, pi)
            if self.bc:
                loss_a, parts = actor_loss(q_pi, pi, a, cfg.alpha)
            else:
                loss_a, parts = -q_pi.mean(), {}
            self.opt_a.zero_grad()
            loss_a.backward(inputs=list(self.actor.parameters()))  # the critic's gradients would be discarded
            self.opt_a.step()
            _soft_update(self.critic_t, self.critic, cfg.tau)
            _soft_update(self.actor_t, self.actor, cfg.tau)
            out.update({"q_pi": float(q_pi.detach().mean()), **parts})
        return out


def fit_td3bc(obs, actions, rewards, next_obs, terminals, cfg: TD3BCConfig, seed: int
              ) -> tuple[TD3BCPolicy, list[dict[str, float]]]:
    """Train TD3+BC on offline transitions (arrays or tensors of shape (M, .), actions in [-1, 1]).

    Returns the policy (actor + normaliser) and the training diagnostics (one row per ``log_every``
    updates: ``step``, ``critic_loss``, ``q_data``, ``q_pi``, ``lambda``, ``bc``, ``q_term``)."""
    policy, _, history = fit_td3bc_critic(obs, actions, rewards, next_obs, terminals, cfg, seed)
    return policy, history


def fit_td3bc_critic(obs, actions, rewards, next_obs, terminals, cfg: TD3BCConfig, seed: int, *,
                     init: tuple[TD3BCPolicy, TwinCritic] | None = None
                     ) -> tuple[TD3BCPolicy, TwinCritic, list[dict[str, float]]]:
    """:func:`fit_td3bc` that also returns the twin critic; with ``init`` (a trained policy and its critic)
    it continues from them instead of fresh networks (online fine-tuning: the same loss, the policy's
    normaliser kept, target networks restarted as copies, fresh Adam state); ``init`` is not modified."""
    s, a, r, s2, d = _tensors(obs, actions, rewards, next_obs, terminals, "fit_td3bc")
    M, S, A = len(s), s.shape[1], a.shape[1]
    if init is not None:
        policy, critic = copy.deepcopy(init[0]), copy.deepcopy(init[1])
        if (policy.s_dim, policy.a_dim) != (S, A):
            raise ValueError(f"fit_td3bc: init acts on (S, A) = {(policy.s_dim, policy.a_dim)}; the data have {(S, A)}")
        policy.train()
    else:
        with torch.random.fork_rng():
            torch.manual_seed(seed % (2**63))
            policy = TD3BCPolicy(S, A, cfg.hidden)
            critic = TwinCritic(S, A, cfg.hidden)
        if cfg.normalize:
            policy.s_mean.copy_(s.mean(0))
            policy.s_std.copy_(s.std(0) + 1e-3)
    with torch.no_grad():
        sn, s2n = policy.normalise(s), policy.normalise(s2)
    learner = _Learner(policy, critic, cfg, seed, bc=True)
    history: list[dict[str, float]] = []
    window: dict[str, list[float]] = {}
    B = min(cfg.batch, M)
    for step in range(1, cfg.steps + 1):
        idx = torch.randint(0, M, (B,), generator=learner.gen)
        for k, v in learner.update(sn[idx], a[idx], r[idx], s2n[idx], d[idx]).items():
            window.setdefault(k, []).append(v)
        if step % cfg.log_every == 0 or step == cfg.steps:
            history.append({"step": step, **{k: float(np.mean(v)) for k, v in window.items()}})
            window = {}
    policy.eval()
    return policy, critic.eval(), history


def save_policy(policy: TD3BCPolicy, history: list[dict[str, float]], path, critic: TwinCritic | None = None) -> None:
    """Write the policy (actor + normaliser), its training diagnostics and (optionally) its critic atomically."""
    from repro.io import atomic_path

    blob = {"dims": [policy.s_dim, policy.a_dim, policy.hidden], "policy": policy.state_dict(), "history": history}
    if critic is not None:
        blob["critic"] = critic.state_dict()
    with atomic_path(path) as tmp:
        torch.save(blob, tmp)


def load_policy(path) -> TD3BCPolicy:
    """The policy written by :func:`save_policy`, ready to act."""
    from repro.io import load_torch

    blob = load_torch(path)  # dims, tensors and float diagnostics (weights_only=True: no code runs)
    policy = TD3BCPolicy(*blob["dims"])
    policy.load_state_dict(blob["policy"])
    return policy.eval()


def load_critic(path) -> TwinCritic:
    """The critic stored beside the policy by :func:`save_policy` (``critic=``), for online fine-tuning."""
    from repro.io import load_torch

    blob = load_torch(path)
    if "critic" not in blob:
        raise ValueError(f"{path}: no critic stored (written without save_policy(..., critic=)); retrain it")
    s_dim, a_dim, hidden = blob["dims"]
    critic = TwinCritic(s_dim, a_dim, hidden)
    critic.load_state_dict(blob["critic"])
    return critic.eval()


def fit_td3_online(env, cfg: TD3BCConfig, seed: int, *, env_steps: int, start_steps: int, explore: float = 0.1,
                   length: int = 1000, action_scale: float = 1.0, progress_every: int = 0
                   ) -> tuple[TD3BCPolicy, TwinCritic, dict[str, np.ndarray], list[dict[str, float]]]:
    """Online TD3 (Fujimoto et al. 2018; the authors' ``sfujim/TD3`` main loop) in a gymnasium ``env``, and
    everything it saw: the replay buffer is the "medium-replay" dataset of D4RL, a mix of a random
    policy and partly trained ones.

    The loop: ``start_steps`` uniform random actions, then the actor plus Gaussian exploration noise of sd
    ``explore`` (clipped to [-1, 1]); from step ``start_steps`` on, one update per environment step on a
    minibatch of the buffer (the critic each step, the actor every ``policy_delay``; no BC term, raw
    states: ``cfg.alpha`` and ``cfg.normalize`` are not used). Episodes are cut at ``length`` steps (a
    cut is not a terminal, as in the reference); env actions are ``action_scale * a`` for ``a`` in
    [-1, 1]. Reference values differ in ``start_steps`` (25,000) and the number of steps (10^6).

    Returns the final policy and critic, the transitions (``observations``, ``actions``, ``rewards``,
    ``next_observations``, ``terminals``, ``episode``, in the order they happened) and one row per
    episode (``episode``, ``env_step`` at its end, ``return``, ``length``, and the mean update
    diagnostics over it; the last row may be an episode cut short by ``env_steps``)."""
    if not 1 <= start_steps <= env_steps or length < 1 or explore < 0:
        raise ValueError(f"fit_td3_online: need 1 <= start_steps <= env_steps, length >= 1, explore >= 0; got "
                         f"start_steps={start_steps}, env_steps={env_steps}, length={length}, explore={explore}")
    S, A = env.observation_space.shape[0], env.action_space.shape[0]
    with torch.random.fork_rng():
        torch.manual_seed(seed % (2**63))
        policy, critic = TD3BCPolicy(S, A, cfg.hidden), TwinCritic(S, A, cfg.hidden)
    learner = _Learner(policy, critic, cfg, seed, bc=False)
    rng = np.random.default_rng(seed)
    fields = ("observations", "actions", "rewards", "next_observations", "terminals")  # the update's argument order
    buf = {k: np.zeros((env_steps, n) if n else env_steps, np.float32)
           for k, n in zip(fields, (S, A, 0, S, 0))}
    tensors = [torch.from_numpy(buf[k]) for k in fields]  # views: the buffer as it fills
    episode = np.zeros(env_steps, np.int64)
    history: list[dict[str, float]] = []
    window: dict[str, list[float]] = {}
    obs, _ = env.reset(seed=int(rng.integers(2**31)))
    ep, ep_ret, ep_len = 0, 0.0, 0
    for t in range(env_steps):
        if t < start_steps:
            a = rng.uniform(-1, 1, A)
        else:
            a = np.clip(policy.act(obs)[0] + explore * rng.standard_normal(A), -1, 1)
        nxt, r, term, trunc, _ = env.step((action_scale * a).astype(np.float32))
        for k, v in zip(fields, (obs, a, r, nxt, float(term))):
            buf[k][t] = v
        episode[t] = ep
        ep_ret, ep_len, obs = ep_ret + float(r), ep_len + 1, nxt
        if t >= start_steps:
            idx = torch.randint(0, t + 1, (min(cfg.batch, t + 1),), generator=learner.gen)
            for k, v in learner.update(*(x[idx] for x in tensors)).items():
                window.setdefault(k, []).append(v)
        if term or trunc or ep_len >= length or t == env_steps - 1:
            history.append({"episode": ep, "env_step": t + 1, "return": ep_ret, "length": ep_len,
                            **{k: float(np.mean(v)) for k, v in window.items()}})
            if progress_every and (ep + 1) % progress_every == 0:
                log.info("TD3 online: episode %d, %d steps, return %.1f", ep, t + 1, ep_ret)
            if t < env_steps - 1:
                window = {}
                obs, _ = env.reset(seed=int(rng.integers(2**31)))
                ep, ep_ret, ep_len = ep + 1, 0.0, 0
    policy.eval()
    data = {**{k: v.astype(np.float64) for k, v in buf.items()}, "episode": episode}
    return policy, critic.eval(), data, history
