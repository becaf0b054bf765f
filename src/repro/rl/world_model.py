"""Learned models for planning from offline transitions: an ensemble dynamics MLP, a reward model and a TD value.

- :class:`Ensemble`: K MLPs evaluated in one batched matrix product (PETS, Chua et al. 2018, without
  the probabilistic heads), each predicting the normalised state change ``s' - s`` from ``(s, a)``
  and trained on its own bootstrap resample of the data.
- reward model: an MLP on ``(s, a, s')``; with ``binary=True`` a logistic output (sparse goal rewards,
  where the reward also ends the episode).
- value model: ``V(s)`` trained by TD(0) with a Polyak target network, ``delta = r + gamma (1 - d)
  V_target(s') - V(s)``, and the asymmetric (expectile) squared loss ``|tau - 1(delta < 0)| delta^2``
  of IQL (Kostrikov et al. 2022, Eq. 5, applied to the TD error): ``tau = 0.5`` is plain TD of the
  behaviour policy, ``tau -> 1`` moves towards the best action seen in the data (exact for
  deterministic dynamics).
- :func:`model_return`: the planning objective of a batch of candidate action sequences,
  ``sum_t gamma^t r_t + gamma^H V(s_H)`` under the ensemble mean, with sparse rewards ending the
  rollout softly (``alive *= 1 - r``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn

from repro.seeding import torch_generator

__all__ = ["ModelConfig", "Ensemble", "WorldModel", "fit_world_model", "model_return", "n_step_targets", "successors"]


@dataclass(frozen=True)
class ModelConfig:
    members: int = 3
    """ensemble members of the dynamics model"""
    hidden: int = 128
    """MLP width of every model"""
    steps: int = 1500
    """minibatch updates of each model"""
    batch: int = 256
    """minibatch size"""
    lr: float = 1e-3
    """Adam learning rate"""
    gamma: float = 0.99
    """discount of the value and the planning objective"""
    expectile: float = 0.9
    """tau of the value's TD loss (0.5 is plain TD)"""
    polyak: float = 0.01
    """target-network update rate of the value"""
    binary_reward: bool = True
    """sparse 0/1 reward that ends the episode (a logistic reward model)"""
    value_steps: int | None = None
    """minibatch updates of the value (None: ``steps``); each target update moves a share ``polyak``, so
    about ``value_steps * polyak * n_step`` steps of the horizon are backed up"""
    n_step: int = 1
    """n of the value's n-step TD target along the dataset's trajectories (1: TD(0))"""


def _mlp(i: int, h: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, h), nn.SiLU(), nn.Linear(h, h), nn.SiLU(), nn.Linear(h, o))


class Ensemble(nn.Module):
    """K two-hidden-layer MLPs in one batched product: (K, B, i) -> (K, B, o)."""

    def __init__(self, k: int, i: int, h: int, o: int):
        super().__init__()
        sizes = [(i, h), (h, h), (h, o)]
        self.w = nn.ParameterList([nn.Parameter(torch.randn(k, a, b) * (1 / a) ** 0.5) for a, b in sizes])
        self.b = nn.ParameterList([nn.Parameter(torch.zeros(k, 1, b)) for _, b in sizes])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for n, (w, b) in enumerate(zip(self.w, self.b)):
            x = torch.baddbmm(b, x, w)
            if n < len(self.w) - 1:
                x = nn.functional.silu(x)
        return x


class WorldModel(nn.Module):
    """Dynamics ensemble, reward and value with the input/output normalisers fitted on the data."""

    def __init__(self, s_dim: int, a_dim: int, cfg: ModelConfig):
        super().__init__()
        self.cfg, self.s_dim, self.a_dim = cfg, s_dim, a_dim
        self.dyn = Ensemble(cfg.members, s_dim + a_dim, cfg.hidden, s_dim)
        self.rew = _mlp(2 * s_dim + a_dim, cfg.hidden, 1)
        self.val = _mlp(s_dim, cfg.hidden, 1)
        for name, d in (("s_mean", s_dim), ("s_std", s_dim), ("d_mean", s_dim), ("d_std", s_dim)):
            self.register_buffer(name, torch.zeros(d) if "mean" in name else torch.ones(d))

    def _ns(self, s: torch.Tensor) -> torch.Tensor:
        return (s - self.s_mean) / self.s_std

    def next_state(self, s: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """Ensemble-mean prediction of s' for (..., s_dim), (..., a_dim)."""
        lead = s.shape[:-1]
        x = torch.cat([self._ns(s), a], -1).reshape(1, -1, self.s_dim + self.a_dim)
        d = self.dyn(x.expand(self.cfg.members, -1, -1)).mean(0)  # (B, s_dim)
        return s + (d * self.d_std + self.d_mean).reshape(*lead, self.s_dim)

    def reward(self, s: torch.Tensor, a: torch.Tensor, s2: torch.Tensor) -> torch.Tensor:
        out = self.rew(torch.cat([self._ns(s), a, self._ns(s2)], -1))[..., 0]
        return torch.sigmoid(out) if self.cfg.binary_reward else out

    def value(self, s: torch.Tensor) -> torch.Tensor:
        return self.val(self._ns(s))[..., 0]


@torch.no_grad()
def model_return(model: WorldModel, s0: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Planning objective of candidates ``actions`` (E, N, H, A) from states ``s0`` (E, S): (E, N)."""
    E, N, H, _ = actions.shape
    s = s0[:, None].expand(E, N, s0.shape[-1])
    gamma = model.cfg.gamma
    ret = torch.zeros(E, N)
    alive = torch.ones(E, N)
    for t in range(H):
        a = actions[:, :, t]
        s2 = model.next_state(s, a)
        r = model.reward(s, a, s2)
        ret = ret + alive * gamma**t * r
        if model.cfg.binary_reward:
            alive = alive * (1 - r)
        s = s2
    return ret + alive * gamma**H * model.value(s)


def n_step_targets(rewards: torch.Tensor, terminals: torch.Tensor, next_obs: torch.Tensor, successor: torch.Tensor,
                   n: int, gamma: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """n-step returns along the data's trajectories: for each transition i, ``(R_i, s_i, g_i)`` with
    ``R_i = sum_{k<m} gamma^k r_{i+k}``, ``s_i`` the next state of the m-th transition and ``g_i =
    gamma^m (1 - d)``, where m <= n stops at a terminal or where the trajectory ends (``successor[j] < 0``:
    transition j has no recorded successor). The TD target is then ``R_i + g_i V(s_i)``."""
    if n < 1:
        raise ValueError(f"n_step must be at least 1; got {n}")
    M = len(rewards)
    ret, disc = rewards.clone(), gamma * (1 - terminals)
    last = torch.arange(M)  # index of the last transition summed
    live = (terminals < 0.5) & (successor >= 0)  # may extend by one more transition
    for _ in range(1, n):
        nxt = torch.where(live, successor[last], last)
        ret = torch.where(live, ret + disc * rewards[nxt], ret)
        disc = torch.where(live, disc * gamma * (1 - terminals[nxt]), disc)
        last = nxt
        live = live & (terminals[nxt] < 0.5) & (successor[nxt] >= 0)
    return ret, next_obs[last], disc


def successors(obs: torch.Tensor, next_obs: torch.Tensor, episode: torch.Tensor | None) -> torch.Tensor:
    """Index of each transition's successor in the flat data (-1 where none: last of its episode, or
    the next row does not start where this one ends)."""
    M = len(obs)
    nxt = torch.full((M,), -1, dtype=torch.long)
    if episode is None or M < 2:
        return nxt
    ok = (episode[1:] == episode[:-1]) & torch.isclose(obs[1:], next_obs[:-1], atol=1e-6).all(-1)
    nxt[:-1] = torch.where(ok, torch.arange(1, M), -1)
    return nxt


def fit_world_model(obs, actions, rewards, next_obs, terminals, cfg: ModelConfig, seed: int,
                    episode: torch.Tensor | None = None, init: WorldModel | None = None) -> WorldModel:
    """Fit the dynamics ensemble, the reward model and the TD value on offline transitions (tensors, (M, .)).

    ``episode`` (M,) ids order the transitions into trajectories for n-step value targets (required
    when ``cfg.n_step > 1``). ``init``: continue from a copy of this trained model (online fine-tuning:
    its normalisers are kept, ``cfg.steps`` / ``cfg.value_steps`` more updates with fresh Adam states and
    bootstrap resamples of the given data; ``init`` itself is not modified)."""
    M = len(obs)
    if not all(len(t) == M for t in (actions, rewards, next_obs, terminals)):
        raise ValueError("fit_world_model: obs, actions, rewards, next_obs and terminals need the same length")
    if M < 2:
        raise ValueError("fit_world_model: need at least two transitions")
    if not 0 < cfg.expectile < 1:
        raise ValueError(f"fit_world_model: expectile must lie in (0, 1); got {cfg.expectile}")
    if cfg.n_step > 1 and episode is None:
        raise ValueError("fit_world_model: n_step > 1 needs the transitions' episode ids")
    gen = torch_generator(seed)
    delta = next_obs - obs
    if init is not None:
        if (init.s_dim, init.a_dim) != (obs.shape[1], actions.shape[1]):
            raise ValueError(f"fit_world_model: init models (S, A) = {(init.s_dim, init.a_dim)}; the data have "
                             f"{(obs.shape[1], actions.shape[1])}")
        model = copy.deepcopy(init).train()
        model.cfg = cfg
    else:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            model = WorldModel(obs.shape[1], actions.shape[1], cfg)
        model.s_mean.copy_(obs.mean(0))
        model.s_std.copy_(obs.std(0).clamp_min(1e-6))
        model.d_mean.copy_(delta.mean(0))
        model.d_std.copy_(delta.std(0).clamp_min(1e-6))
    target_d = (delta - model.d_mean) / model.d_std
    x = torch.cat([model._ns(obs), actions], -1)
    boot = torch.randint(0, M, (cfg.members, M), generator=gen)  # one bootstrap resample per member

    opt = torch.optim.Adam(model.dyn.parameters(), lr=cfg.lr)
    for _ in range(cfg.steps):
        idx = boot[:, torch.randint(0, M, (min(cfg.batch, M),), generator=gen)]  # (K, B)
        loss = ((model.dyn(x[idx]) - target_d[idx]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    opt = torch.optim.Adam(model.rew.parameters(), lr=cfg.lr)
    lossf = nn.functional.binary_cross_entropy if cfg.binary_reward else nn.functional.mse_loss
    for _ in range(cfg.steps):
        idx = torch.randint(0, M, (min(cfg.batch, M),), generator=gen)
        loss = lossf(model.reward(obs[idx], actions[idx], next_obs[idx]), rewards[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()

    ret, boot, disc = n_step_targets(rewards, terminals, next_obs, successors(obs, next_obs, episode), cfg.n_step,
                                     cfg.gamma)
    target = copy.deepcopy(model.val)
    opt = torch.optim.Adam(model.val.parameters(), lr=cfg.lr)
    for _ in range(cfg.steps if cfg.value_steps is None else cfg.value_steps):
        idx = torch.randint(0, M, (min(cfg.batch, M),), generator=gen)
        with torch.no_grad():
            y = ret[idx] + disc[idx] * target(model._ns(boot[idx]))[:, 0]
        d = y - model.value(obs[idx])
        loss = (torch.abs(cfg.expectile - (d < 0).float()) * d**2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for p, q in zip(target.parameters(), model.val.parameters()):
                p.lerp_(q, cfg.polyak)
    model.eval()
    return model
