"""A small state-conditioned DDPM over action sequences: the generative prior of trajectory planning.

Denoising diffusion probabilistic model (Ho et al. 2020, "Denoising Diffusion Probabilistic
Models", arXiv 2006.11239): forward process ``q(x_k | x_0) = N(sqrt(abar_k) x_0, (1 - abar_k) I)``
(Eq. 4), the simple epsilon loss ``|eps - eps_theta(x_k, k, c)|^2`` (Eq. 14), ancestral sampling
(Algorithm 2) with the posterior variance ``beta~_k`` and the predicted ``x_0`` clipped to the action
box (Diffuser / Diffusion Policy practice). The noise schedule is the cosine one of Nichol &
Dhariwal 2021 (arXiv 2102.09672, Eq. 17), which behaves well with few (10-50) steps.

``x_0`` is a flattened action sequence ``(H * A,)`` in ``[-1, 1]``; ``c`` is the state at its start.
The denoiser is an MLP on ``[x_k, c, sinusoidal(k)]``: small enough for a CPU, as in Diffusion Policy's
low-dimensional variant (a U-Net would be its image-scale choice).

:class:`GoalConditioned` uses a model trained on conditions ``[state, goal]`` (goals relabelled in
hindsight, :mod:`repro.rl.hindsight`) as a policy for one fixed goal: its ``sample(states, n, gen)``
appends the goal to every state, so it stands wherever a state-conditioned prior does.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import torch
from torch import nn

from repro.seeding import torch_generator

__all__ = ["DiffusionConfig", "ActionDiffusion", "GoalConditioned", "fit_action_diffusion"]


@dataclass(frozen=True)
class DiffusionConfig:
    steps: int = 20
    """diffusion steps K (Diffuser uses 20 for locomotion)"""
    hidden: int = 256
    """MLP width of the denoiser"""
    layers: int = 3
    """hidden layers of the denoiser"""
    lr: float = 1e-3
    """Adam learning rate"""
    train_steps: int = 2000
    """minibatch updates"""
    batch: int = 256
    """minibatch size"""
    clip: float = 1.0
    """predicted x_0 is clipped to [-clip, clip] while sampling"""


def cosine_betas(steps: int, s: float = 0.008) -> torch.Tensor:
    """Nichol & Dhariwal 2021 Eq. 17: ``abar(t) = cos^2((t/K + s) / (1 + s) * pi / 2)``, betas clipped at 0.999."""
    t = torch.arange(steps + 1, dtype=torch.float64) / steps
    abar = torch.cos((t + s) / (1 + s) * math.pi / 2) ** 2
    return (1 - abar[1:] / abar[:-1]).clamp(max=0.999).float()


class ActionDiffusion(nn.Module):
    """epsilon_theta(x_k, k, c) and the DDPM sampler for sequences of ``dim`` numbers given ``cond_dim`` numbers."""

    def __init__(self, dim: int, cond_dim: int, cfg: DiffusionConfig = DiffusionConfig()):
        super().__init__()
        self.dim, self.cond_dim, self.cfg = dim, cond_dim, cfg
        width = [dim + cond_dim + 32] + [cfg.hidden] * cfg.layers
        mods: list[nn.Module] = []
        for a, b in zip(width[:-1], width[1:]):
            mods += [nn.Linear(a, b), nn.Mish()]
        self.net = nn.Sequential(*mods, nn.Linear(width[-1], dim))
        betas = cosine_betas(cfg.steps)
        alphas = 1 - betas
        abar = torch.cumprod(alphas, 0)
        abar_prev = torch.cat([torch.ones(1), abar[:-1]])
        self.register_buffer("betas", betas)
        self.register_buffer("abar", abar)
        self.register_buffer("abar_prev", abar_prev)
        self.register_buffer("cond_mean", torch.zeros(cond_dim))
        self.register_buffer("cond_std", torch.ones(cond_dim))

    def _embed(self, k: torch.Tensor) -> torch.Tensor:
        freqs = torch.exp(-math.log(1000.0) * torch.arange(16, dtype=torch.float32) / 16)
        ang = k.float()[:, None] * freqs[None]
        return torch.cat([ang.sin(), ang.cos()], -1)  # (B, 32)

    def eps(self, x: torch.Tensor, k: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        c = (c - self.cond_mean) / self.cond_std
        return self.net(torch.cat([x, c, self._embed(k)], -1))

    def loss(self, x0: torch.Tensor, c: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Eq. 14 of Ho et al.: noise a batch at uniform steps and regress the noise."""
        k = torch.randint(0, self.cfg.steps, (x0.shape[0],), generator=generator)
        noise = torch.randn(x0.shape, generator=generator)
        ab = self.abar[k][:, None]
        xk = ab.sqrt() * x0 + (1 - ab).sqrt() * noise  # Eq. 4
        return ((self.eps(xk, k, c) - noise) ** 2).mean()

    @torch.no_grad()
    def sample(self, c: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
        """``n`` samples per condition row: (B, cond_dim) -> (B, n, dim). Algorithm 2 of Ho et al."""
        B = c.shape[0]
        cc = c[:, None].expand(B, n, self.cond_dim).reshape(B * n, self.cond_dim)
        x = torch.randn((B * n, self.dim), generator=generator)
        for k in reversed(range(self.cfg.steps)):
            kk = torch.full((B * n,), k, dtype=torch.long)
            ab, ab_prev, beta = self.abar[k], self.abar_prev[k], self.betas[k]
            x0 = ((x - (1 - ab).sqrt() * self.eps(x, kk, cc)) / ab.sqrt()).clamp(-self.cfg.clip, self.cfg.clip)
            # posterior q(x_{k-1} | x_k, x_0), Ho et al. Eq. 6-7
            mean = (ab_prev.sqrt() * beta / (1 - ab)) * x0 + ((1 - beta).sqrt() * (1 - ab_prev) / (1 - ab)) * x
            if k > 0:
                var = beta * (1 - ab_prev) / (1 - ab)
                x = mean + var.sqrt() * torch.randn(x.shape, generator=generator)
            else:
                x = mean
        return x.reshape(B, n, self.dim)


class GoalConditioned:
    """A model trained on conditions ``[state, goal]`` sampled for one fixed ``goal``: ``sample(states, n, gen)``."""

    def __init__(self, model: ActionDiffusion, goal):
        goal = torch.as_tensor(goal, dtype=torch.float32).reshape(-1)
        if model.cond_dim <= len(goal):
            raise ValueError(f"GoalConditioned: the model's condition has {model.cond_dim} numbers, no room for a "
                             f"state beside a goal of {len(goal)}")
        self.model, self.goal = model, goal
        self.cfg, self.dim, self.cond_dim = model.cfg, model.dim, model.cond_dim - len(goal)

    def sample(self, c: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
        """``n`` samples per state row: (B, state_dim) -> (B, n, dim), each conditioned on ``[state, goal]``."""
        return self.model.sample(torch.cat([c, self.goal.expand(c.shape[0], -1)], -1), n, generator)


def fit_action_diffusion(x0: torch.Tensor, cond: torch.Tensor, cfg: DiffusionConfig, seed: int,
                         init: ActionDiffusion | None = None) -> ActionDiffusion:
    """Train the prior on sequences ``x0`` (M, dim) in [-1, 1] with conditions ``cond`` (M, cond_dim).

    ``init``: continue from a copy of this trained prior (online fine-tuning: its condition normaliser and
    noise schedule kept, ``cfg.train_steps`` more updates under a fresh Adam and cosine schedule; ``init``
    itself is not modified)."""
    if x0.ndim != 2 or cond.ndim != 2 or len(x0) != len(cond):
        raise ValueError(f"fit_action_diffusion: need x0 (M, dim) and cond (M, c); got {tuple(x0.shape)}, {tuple(cond.shape)}")
    if len(x0) < 2:
        raise ValueError("fit_action_diffusion: need at least two training sequences")
    gen = torch_generator(seed)
    if init is not None:
        if (init.dim, init.cond_dim) != (x0.shape[1], cond.shape[1]):
            raise ValueError(f"fit_action_diffusion: init models (dim, cond) = {(init.dim, init.cond_dim)}; the data "
                             f"have {(x0.shape[1], cond.shape[1])}")
        model = copy.deepcopy(init).train()
    else:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            model = ActionDiffusion(x0.shape[1], cond.shape[1], cfg)
        model.cond_mean.copy_(cond.mean(0))
        model.cond_std.copy_(cond.std(0).clamp_min(1e-6))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.train_steps)
    for _ in range(cfg.train_steps):
        idx = torch.randint(0, len(x0), (min(cfg.batch, len(x0)),), generator=gen)
        loss = model.loss(x0[idx], cond[idx], gen)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    return model
