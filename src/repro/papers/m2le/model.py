"""Frozen MLP backbone with one LoRA adapter per task, merged into dense weights after each task.

``LoraMLP``: ``n_layers`` hidden linear layers (GELU) and a linear head, pretrained on the base
task, then frozen. Each adapted layer ``l`` computes ``W_l = W0_l + M_l + s B_l A_l (+ E_l)`` where
``M_l`` is the merged update of the tasks so far (a dense buffer), ``B_l A_l`` the current task's
LoRA (Hu et al. 2022, arXiv 2106.09685; ``s = lora_alpha / r``, ``B`` starts at zero) and ``E_l``
an optional perturbation (TSP). The head is pretrained and frozen with the backbone: every task
adapts only through LoRA, so merging decides everything a task keeps.

``fisher_diag`` is the empirical Fisher of the dense weights ``W_l`` (the mean over examples of the
squared per-example gradient of the cross-entropy, labels from the task's training set), the
curvature P&M (arXiv 2505.22389 §3.2) uses; per-example gradients come from ``torch.func``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["BackboneConfig", "LoraMLP", "pretrain", "fisher_diag", "local_labels", "accuracy"]


@dataclass(frozen=True)
class BackboneConfig:
    hidden: int = 64
    """width of every hidden layer"""
    n_layers: int = 2
    """hidden layers, all adapted by LoRA"""
    rank: int = 4
    """LoRA rank r"""
    lora_alpha: float = 4.0
    """LoRA scale s = lora_alpha / r"""
    pretrain_epochs: int = 30
    pretrain_lr: float = 3e-3
    batch_size: int = 64


class LoraMLP(nn.Module):
    def __init__(self, n_features: int, n_classes: int, cfg: BackboneConfig) -> None:
        super().__init__()
        dims = [n_features] + [cfg.hidden] * cfg.n_layers
        self.cfg = cfg
        self.scale = cfg.lora_alpha / cfg.rank
        self.base = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.head = nn.Linear(cfg.hidden, n_classes)
        for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
            self.register_buffer(f"merged{i}", torch.zeros(b, a))
            self.register_buffer(f"perturb{i}", torch.zeros(b, a))
        self.A = nn.ParameterList(nn.Parameter(torch.zeros(cfg.rank, a)) for a in dims[:-1])
        self.B = nn.ParameterList(nn.Parameter(torch.zeros(b, cfg.rank)) for b in dims[1:])

    @property
    def n_adapted(self) -> int:
        return len(self.base)

    def merged(self, i: int) -> torch.Tensor:
        return getattr(self, f"merged{i}")

    def perturb(self, i: int) -> torch.Tensor:
        return getattr(self, f"perturb{i}")

    def freeze_backbone(self) -> None:
        for p in [*self.base.parameters(), *self.head.parameters()]:
            p.requires_grad_(False)

    def reset_lora(self, generator: torch.Generator) -> None:
        """A fresh adapter: ``A`` Kaiming-uniform (Hu et al. §4.1), ``B = 0``, so ``B A = 0``."""
        with torch.no_grad():
            for a, b in zip(self.A, self.B):
                bound = (3.0 / a.shape[1]) ** 0.5
                a.copy_((torch.rand(a.shape, generator=generator) * 2 - 1) * bound)
                b.zero_()

    def update(self, i: int) -> torch.Tensor:
        """The current task's dense update ``s B_i A_i`` of layer ``i``; (out, in)."""
        return self.scale * self.B[i] @ self.A[i]

    def weights(self) -> list[torch.Tensor]:
        """Effective dense weights ``W0 + M + s B A + E`` of every adapted layer."""
        return [lin.weight + self.merged(i) + self.update(i) + self.perturb(i) for i, lin in enumerate(self.base)]

    def forward_with(self, weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        h = x
        for w, lin in zip(weights, self.base):
            h = F.gelu(h @ w.T + lin.bias)  # (N, out)
        return self.head(h)  # (N, C)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_with(self.weights(), x)


def local_labels(y: torch.Tensor, classes: tuple[int, ...]) -> torch.Tensor:
    """Position of each label among the task's classes (the logits a task reads)."""
    lookup = torch.full((int(max(classes)) + 1,), -1, dtype=torch.long)
    lookup[torch.as_tensor(classes)] = torch.arange(len(classes))
    if (y > max(classes)).any() or (lookup[y] < 0).any():
        raise ValueError(f"labels outside the task's classes {classes}")
    return lookup[y]


def accuracy(model: LoraMLP, x: torch.Tensor, y: torch.Tensor, classes: tuple[int, ...]) -> float:
    with torch.no_grad():
        logits = model(x)[:, list(classes)]
    return float((logits.argmax(1) == local_labels(y, classes)).float().mean())


def pretrain(model: LoraMLP, x: torch.Tensor, y: torch.Tensor, seed: int) -> list[float]:
    """Train backbone and head on the base task (Adam, full batch shuffles from ``seed``); returns losses."""
    cfg = model.cfg
    g = torch.Generator().manual_seed(seed)
    params = [*model.base.parameters(), *model.head.parameters()]
    opt = torch.optim.Adam(params, lr=cfg.pretrain_lr)
    losses = []
    for _ in range(cfg.pretrain_epochs):
        order = torch.randperm(len(y), generator=g)
        for s in range(0, len(y), cfg.batch_size):
            idx = order[s:s + cfg.batch_size]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(float(loss.detach()))
    model.freeze_backbone()
    return losses


def fisher_diag(model: LoraMLP, x: torch.Tensor, y: torch.Tensor, classes: tuple[int, ...]) -> list[torch.Tensor]:
    """Diagonal empirical Fisher of each adapted layer's dense weight at the current weights; (out, in) each."""
    weights = [w.detach() for w in model.weights()]
    cls = torch.as_tensor(classes)
    target = local_labels(y, classes)

    def loss_one(ws, xi, yi):
        return F.cross_entropy(model.forward_with(ws, xi[None])[:, cls], yi[None])

    grads = torch.func.vmap(torch.func.grad(loss_one), in_dims=(None, 0, 0))(weights, x, target)
    return [(g.detach() ** 2).mean(0) for g in grads]
