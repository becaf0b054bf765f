"""PPO-clip with generalised advantage estimation, for a Gaussian policy on continuous actions.

References: Schulman et al. 2017, "Proximal Policy Optimization Algorithms" (arXiv 1707.06347),
Eq. (7) (clipped surrogate) and Eq. (9) (the combined loss); Schulman et al. 2016, "High-Dimensional
Continuous Control Using Generalized Advantage Estimation" (arXiv 1506.02438), Eq. (16). The layout
follows cleanrl's ``ppo_continuous_action.py``: orthogonal initialisation, a state-independent
log-std, Adam with eps 1e-5, per-minibatch advantage normalisation, gradient-norm clipping.

API
---
- :class:`PPOConfig`: the algorithm's hyper-parameters (cleanrl's defaults where it has them).
- :func:`gae`: advantages and returns of one rollout, with optional episode ends; rewards and values
  may carry trailing batch dimensions (T, ...), e.g. one column per agent of a multi-agent game.
- :func:`clipped_loss`: the PPO-clip loss of Eq. (9) from new and old log-probabilities (shared by
  :class:`PPOAgent` and the multi-agent trainer of :mod:`repro.rl.marl`).
- :class:`PPOAgent`: actor pi(a | s) = N(mu(s), diag(exp(log_std))^2) and critic V(s), two MLPs
  of width ``hidden`` (optionally spectrally normalised); ``act(s)`` samples one action with its
  log-probability and value, ``learn(...)`` runs the PPO epochs on one rollout.

The agent's randomness comes from ``seed`` only: initial weights from one generator, action noise
and minibatch orders from a second one; the global torch RNG is left as it was (``nn.Linear``'s
default init and ``spectral_norm``'s power-iteration vectors draw from it, so they are built inside
an isolated, seeded fork). Used by RLQ-Grad (:mod:`repro.methods.rlqgrad`), whose agent proposes a
quantum circuit's parameter updates.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm as _spectral_norm

from repro.seeding import torch_generator

__all__ = ["PPOConfig", "annealed_lr", "gae", "clipped_loss", "PPOAgent", "mlp"]


@dataclass(frozen=True)
class PPOConfig:
    """Hyper-parameters of the PPO algorithm (cleanrl ``ppo_continuous_action.py`` defaults)."""

    ppo_epochs: int = 4
    """passes over each rollout"""
    minibatches: int = 2
    """minibatches per pass (each of ``T // minibatches`` transitions)"""
    clip: float = 0.2
    """epsilon of the clipped ratio, Eq. (7)"""
    gamma: float = 0.99
    """discount"""
    gae_lambda: float = 0.95
    """lambda of GAE"""
    lr: float = 3e-4
    """Adam learning rate of actor, critic and log-std"""
    vf_coef: float = 0.5
    """c1, weight of the value loss in Eq. (9)"""
    ent_coef: float = 0.0
    """c2, weight of the entropy bonus in Eq. (9)"""
    max_grad_norm: float = 0.5
    """global gradient-norm clip"""
    init_log_std: float = -1.0
    """initial log standard deviation of every action component"""
    anneal_lr: bool = False
    """anneal the learning rate linearly to 0 over every optimiser step (:func:`annealed_lr`); read by
    :func:`repro.rl.marl.train_ippo`, which knows the total number of steps (:class:`PPOAgent` refuses it)"""


def annealed_lr(lr: float, step: int, total: int) -> float:
    """lr * (1 - step / total): optax's / cleanrl's linear schedule to 0 at optimiser step ``step`` (0-based) of ``total``."""
    return lr * (1.0 - min(max(step / total, 0.0), 1.0))


def gae(rewards: torch.Tensor, values: torch.Tensor, last_value: torch.Tensor | float, *, gamma: float,
        lam: float, terminated: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates and returns of one rollout of ``T`` transitions.

    Implements A_t = sum_l (gamma lam)^l delta_{t+l}, delta_t = r_t + gamma V(s_{t+1}) - V(s_t)
    (Schulman et al. 2016, Eq. 16), computed backwards in one pass.

    Parameters
    ----------
    rewards, values : (T,) or (T, ...) r_t and V(s_t); trailing dimensions are independent sequences.
    last_value : V(s_T), the value of the state after the rollout (bootstraps a continuing task);
        a scalar or a tensor of the trailing shape.
    gamma, lam : discount and GAE lambda.
    terminated : optional (T,) flags, 1 where the episode ended with transition t (s_{t+1} is
        terminal: neither its value nor later deltas flow back past t). ``None``: a continuing task.

    Returns
    -------
    (advantages, returns) : two tensors shaped like ``values``; returns = advantages + values.
    """
    T = rewards.shape[0]
    adv = torch.zeros_like(values)
    last = 0.0
    for t in reversed(range(T)):
        nxt = last_value if t == T - 1 else values[t + 1]
        if terminated is not None and terminated[t]:
            nxt, last = 0.0, 0.0
        delta = rewards[t] + gamma * nxt - values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv, adv + values


def clipped_loss(logp: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor, value: torch.Tensor,
                 returns: torch.Tensor, entropy: torch.Tensor, cfg: PPOConfig, *, normalise: bool = True
                 ) -> tuple[torch.Tensor, dict[str, float]]:
    """The PPO-clip loss L = L^CLIP + c1 L^VF - c2 S (Schulman et al. 2017, Eq. 7 and Eq. 9, as a loss).

    All arguments are flat tensors over one minibatch of transitions; ``adv`` is normalised within
    the minibatch (cleanrl) when ``normalise`` and it holds more than one element.
    """
    if normalise and adv.numel() > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = (logp - old_logp).exp()
    pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()  # Eq. (7)
    v_loss = 0.5 * (value - returns).pow(2).mean()
    ent = entropy.mean()
    loss = pg_loss + cfg.vf_coef * v_loss - cfg.ent_coef * ent  # Eq. (9), as a loss
    return loss, {"pg_loss": pg_loss.item(), "v_loss": v_loss.item(), "entropy": ent.item()}


@contextlib.contextmanager
def _isolated_global_rng(seed: int):
    """Seed torch's global RNG in isolation (restored on exit) for code that draws from it."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed % 2**63)
        yield


def mlp(in_dim: int, hidden: int, out_dim: int, generator: torch.Generator, *, out_gain: float,
        spectral_norm: bool = False) -> nn.Sequential:
    """in -> hidden -> hidden -> out with tanh, orthogonal weights from ``generator`` and zero biases.

    cleanrl's ``layer_init``: gain sqrt(2) on hidden layers, ``out_gain`` on the output layer.
    """
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate([(in_dim, hidden), (hidden, hidden), (hidden, out_dim)]):
        lin = nn.Linear(a, b)
        nn.init.orthogonal_(lin.weight, out_gain if i == 2 else math.sqrt(2), generator=generator)
        nn.init.zeros_(lin.bias)
        layers.append(_spectral_norm(lin) if spectral_norm else lin)
        if i < 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class PPOAgent(nn.Module):
    """Gaussian policy pi(a | s) and value V(s), trained by PPO-clip on rollouts.

    Parameters
    ----------
    state_dim, action_dim : sizes of s and a.
    cfg : the algorithm's settings.
    hidden : width of the two hidden layers of the actor and of the critic.
    spectral_norm : spectrally normalise every linear layer of both (Miyato et al. 2018).
    seed : weights from ``torch_generator(seed)``; action noise and minibatch orders from
        ``torch_generator(seed + 1)``.
    """

    def __init__(self, state_dim: int, action_dim: int, cfg: PPOConfig = PPOConfig(), *, hidden: int = 64,
                 spectral_norm: bool = False, seed: int):
        super().__init__()
        if cfg.anneal_lr:
            raise ValueError("PPOAgent: anneal_lr needs the total number of updates, which learn() does not know")
        gen = torch_generator(seed)
        with _isolated_global_rng(seed):
            self.actor = mlp(state_dim, hidden, action_dim, gen, out_gain=0.01, spectral_norm=spectral_norm)
            self.critic = mlp(state_dim, hidden, 1, gen, out_gain=1.0, spectral_norm=spectral_norm)
        self.log_std = nn.Parameter(torch.full((action_dim,), cfg.init_log_std))
        self.cfg = cfg
        self.opt = torch.optim.Adam(self.parameters(), lr=cfg.lr, eps=1e-5)
        self.generator = torch_generator(seed + 1)

    def dist(self, s: torch.Tensor) -> torch.distributions.Normal:
        """pi(. | s) for a batch of states (T, state_dim)."""
        mean = self.actor(s)  # (T, A)
        return torch.distributions.Normal(mean, self.log_std.exp().expand_as(mean))

    @torch.no_grad()
    def act(self, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample a ~ pi(. | s) for one state (state_dim,): (a (A,), log pi(a|s), V(s))."""
        mean = self.actor(s[None])[0]
        a = mean + self.log_std.exp() * torch.randn(mean.shape, generator=self.generator)
        logp = torch.distributions.Normal(mean, self.log_std.exp()).log_prob(a).sum()
        return a, logp, self.critic(s[None])[0, 0]

    def learn(self, states: torch.Tensor, actions: torch.Tensor, logps: torch.Tensor, values: torch.Tensor,
              rewards: torch.Tensor, last_value: torch.Tensor, terminated: torch.Tensor | None = None
              ) -> dict[str, float]:
        """One PPO optimisation on a rollout of T transitions (tensors with leading dim T).

        ``logps`` and ``values`` are those :meth:`act` returned when the actions were taken;
        ``last_value`` and ``terminated`` as in :func:`gae`. Returns the last minibatch's losses.
        """
        cfg = self.cfg
        T = rewards.shape[0]
        adv, returns = gae(rewards, values, last_value, gamma=cfg.gamma, lam=cfg.gae_lambda, terminated=terminated)
        mb = max(T // cfg.minibatches, 1)
        stats: dict[str, float] = {}
        for _ in range(cfg.ppo_epochs):
            order = torch.randperm(T, generator=self.generator)
            for start in range(0, T, mb):
                idx = order[start:start + mb]
                dist = self.dist(states[idx])
                loss, stats = clipped_loss(dist.log_prob(actions[idx]).sum(-1), logps[idx], adv[idx],
                                           self.critic(states[idx])[:, 0], returns[idx],
                                           dist.entropy().sum(-1), cfg)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.parameters(), cfg.max_grad_norm)
                self.opt.step()
        return stats
