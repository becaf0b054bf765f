"""Immunizing a linear feature extractor theta (z = x @ theta) and the adversary that fine-tunes a probe on it.

``immunize`` minimises, by Adam on theta, w_ill * R_ill(X_harm theta) + w_well * R_well(X_benign theta)
(the condition-number baseline) plus, for ours, w_plateau * plateau(X_harm theta, y_harm, w) with w
the harmful probe refit by least squares each step (the plateau term needs a probe to perturb).
``adversary`` runs a probe on frozen features with SGD or Adam on the harmful task and records its
loss each step: the slower this falls, the stronger the immunization.
"""

from __future__ import annotations

import torch

from repro.methods.immunization.regularizers import plateau, r_ill, r_well

__all__ = ["immunize", "adversary"]


def immunize(x_harm: torch.Tensor, y_harm: torch.Tensor, x_benign: torch.Tensor, theta0: torch.Tensor, *, steps: int,
             lr: float, w_ill: float = 1.0, w_well: float = 1.0, w_plateau: float = 0.0, radius: float = 0.1,
             n_samples: int = 4, seed: int = 0) -> torch.Tensor:
    """Immunized copy of ``theta0`` (w_plateau = 0 is the condition-number baseline)."""
    if steps < 0 or lr <= 0:
        raise ValueError(f"immunize: need steps >= 0 and lr > 0; got {steps}, {lr}")
    theta = theta0.clone().requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        zh, zb = x_harm @ theta, x_benign @ theta
        loss = w_ill * r_ill(zh) + w_well * r_well(zb) / r_well(zb).detach().clamp_min(1e-12)
        if w_plateau > 0:
            onehot = torch.nn.functional.one_hot(y_harm).to(zh.dtype)
            w = torch.linalg.lstsq(zh.detach(), onehot).solution
            loss = loss + w_plateau * plateau(zh, y_harm, w, radius=radius, n_samples=n_samples, generator=gen)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return theta.detach()


def adversary(z: torch.Tensor, y: torch.Tensor, *, optimizer: str, lr: float, steps: int) -> list[float]:
    """Least-squares loss of a probe on ``z`` fit to one-hot ``y`` from zero, after each of ``steps`` steps."""
    if optimizer not in ("sgd", "adam"):
        raise ValueError(f"adversary: optimizer must be 'sgd' or 'adam'; got {optimizer!r}")
    target = torch.nn.functional.one_hot(y).to(z.dtype)
    w = torch.zeros(z.shape[1], target.shape[1], dtype=z.dtype, requires_grad=True)
    opt = (torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam)([w], lr=lr)
    losses = []
    for _ in range(steps):
        loss = 0.5 * ((z @ w - target) ** 2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses
