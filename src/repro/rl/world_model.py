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

__all__ = ["ModelConfig", "Ensemble", "WorldModel", "fit_world_model", "model_return"]


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


def fit_world_model(obs, actions, rewards, next_obs, terminals, cfg: ModelConfig, seed: int) -> WorldModel:
    """Fit the dynamics ensemble, the reward model and the TD value on offline transitions (tensors, (M, .))."""
    M = len(obs)
    if not all(len(t) == M for t in (actions, rewards, next_obs, terminals)):
        raise ValueError("fit_world_model: obs, actions, rewards, next_obs and terminals need the same length")
    if M < 2:
        raise ValueError("fit_world_model: need at least two transitions")
    if not 0 < cfg.expectile < 1:
        raise ValueError(f"fit_world_model: expectile must lie in (0, 1); got {cfg.expectile}")
    gen = torch_generator(seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = WorldModel(obs.shape[1], actions.shape[1], cfg)
    delta = next_obs - obs
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

    target = copy.deepcopy(model.val)
    opt = torch.optim.Adam(model.val.parameters(), lr=cfg.lr)
    for _ in range(cfg.steps):
        idx = torch.randint(0, M, (min(cfg.batch, M),), generator=gen)
        with torch.no_grad():
            y = rewards[idx] + cfg.gamma * (1 - terminals[idx]) * target(model._ns(next_obs[idx]))[:, 0]
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
