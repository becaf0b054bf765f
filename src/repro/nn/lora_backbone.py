"""Frozen backbones with one LoRA adapter per task, merged into dense weights after each task.

Two backbones, chosen by ``BackboneConfig.kind``, both pretrained on the base task and frozen
(embedding, norms, biases and the linear head included); every task adapts only through LoRA, so
merging decides everything a task keeps:

- ``mixer`` (the presets' default, the stand-in for the paper's ViT-B/16): an MLP-Mixer (``repro.nn.mixer``,
  Tolstikhin et al. 2021) on ``patch`` x ``patch`` image patches, ``depth`` blocks of ``dim``
  channels, LoRA on the token-mixing and channel-mixing linear layers of every block (4 per block;
  the Mixer's counterparts of a ViT's attention and MLP weights). Inputs are tokenised by the
  sequence's grid (``Sequence.grid``, H x W x C): 8 x 8 digits with 2 x 2 patches are 16 tokens of
  4 pixels, 10 x 10 RGB shapes 25 tokens of 12 values; ``blocks`` (no image) has one token per
  feature block (``Sequence.patch = 1`` on its n_blocks x 1 x block_dim grid).
- ``mlp`` (the first build's backbone, kept as a variant): ``n_layers`` hidden linear layers (GELU)
  of width ``hidden`` and a linear head, LoRA on every hidden layer. Its first layer sees the raw
  input columns, so the planted block structure of ``blocks`` shows in its curvature (tested).

Each adapted layer ``l`` computes ``W_l = W0_l + M_l + s B_l A_l (+ E_l)`` where ``M_l`` is the
merged update of the tasks so far (a dense buffer), ``B_l A_l`` the current task's LoRA (Hu et al.
2022, arXiv 2106.09685; ``s = lora_alpha / r``, ``B`` starts at zero) and ``E_l`` an optional
perturbation (TSP). The merges, the Fisher and TSP see only these dense weights
(:meth:`LoraBackbone.weights`, :meth:`LoraBackbone.forward_with`), whatever the backbone.

``fisher_diag`` is the empirical Fisher of the dense weights ``W_l`` (the mean over examples of the
squared per-example gradient of the cross-entropy, labels from the task's training set), the
curvature P&M (arXiv 2505.22389 §3.2) uses; per-example gradients come from ``torch.func``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from repro.nn.mixer import MLPMixer, patchify

__all__ = ["BackboneConfig", "LoraBackbone", "LoraMLP", "LoraMixer", "make_backbone", "pretrain", "fisher_diag",
           "local_labels", "accuracy", "BACKBONES"]

BACKBONES = ("mlp", "mixer")


@dataclass(frozen=True)
class BackboneConfig:
    kind: str = "mlp"
    """``mlp`` or ``mixer``"""
    hidden: int = 64
    """mlp: width of every hidden layer"""
    n_layers: int = 2
    """mlp: hidden layers, all adapted by LoRA"""
    dim: int = 32
    """mixer: channels per token"""
    depth: int = 2
    """mixer: blocks (4 adapted layers each)"""
    patch: int = 2
    """mixer: side of the square image patches (one token each)"""
    token_hidden: int = 32
    """mixer: hidden width of the token-mixing MLP"""
    channel_hidden: int = 64
    """mixer: hidden width of the channel-mixing MLP"""
    rank: int = 4
    """LoRA rank r"""
    lora_alpha: float = 4.0
    """LoRA scale s = lora_alpha / r"""
    pretrain_epochs: int = 30
    pretrain_lr: float = 3e-3
    batch_size: int = 64

    def __post_init__(self):
        if self.kind not in BACKBONES:
            raise ValueError(f"m2le backbone kind {self.kind!r} is not one of {', '.join(BACKBONES)}")


class LoraBackbone(nn.Module):
    """LoRA, merged-update and perturbation state over the dense layers a subclass adapts.

    A subclass builds its frozen network, then calls ``_add_lora(shapes)`` with the (out, in) shape
    of each adapted layer, and implements ``_adapted()`` (those layers, ``nn.Linear``) and
    ``forward_with(weights, x)`` (the network with the given dense weights in their place).
    """

    cfg: BackboneConfig

    def _add_lora(self, shapes: list[tuple[int, int]]) -> None:
        self.scale = self.cfg.lora_alpha / self.cfg.rank
        for i, (b, a) in enumerate(shapes):
            self.register_buffer(f"merged{i}", torch.zeros(b, a))
            self.register_buffer(f"perturb{i}", torch.zeros(b, a))
        self.A = nn.ParameterList(nn.Parameter(torch.zeros(self.cfg.rank, a)) for _, a in shapes)
        self.B = nn.ParameterList(nn.Parameter(torch.zeros(b, self.cfg.rank)) for b, _ in shapes)

    def _adapted(self) -> list[nn.Linear]:
        raise NotImplementedError

    def forward_with(self, weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @property
    def n_adapted(self) -> int:
        return len(self.A)

    def merged(self, i: int) -> torch.Tensor:
        return getattr(self, f"merged{i}")

    def perturb(self, i: int) -> torch.Tensor:
        return getattr(self, f"perturb{i}")

    def backbone_parameters(self) -> list[nn.Parameter]:
        """Everything pretraining trains and the tasks leave frozen: all parameters but the LoRA factors."""
        lora = {id(p) for p in [*self.A, *self.B]}
        return [p for p in self.parameters() if id(p) not in lora]

    def freeze_backbone(self) -> None:
        for p in self.backbone_parameters():
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
        return [lin.weight + self.merged(i) + self.update(i) + self.perturb(i) for i, lin in enumerate(self._adapted())]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_with(self.weights(), x)


class LoraMLP(LoraBackbone):
    def __init__(self, n_features: int, n_classes: int, cfg: BackboneConfig) -> None:
        super().__init__()
        dims = [n_features] + [cfg.hidden] * cfg.n_layers
        self.cfg = cfg
        self.base = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.head = nn.Linear(cfg.hidden, n_classes)
        self._add_lora([(b, a) for a, b in zip(dims[:-1], dims[1:])])

    def _adapted(self) -> list[nn.Linear]:
        return list(self.base)

    def forward_with(self, weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        h = x
        for w, lin in zip(weights, self.base):
            h = F.gelu(h @ w.T + lin.bias)  # (N, out)
        return self.head(h)  # (N, C)


class LoraMixer(LoraBackbone):
    """An MLP-Mixer on the ``grid`` (H, W, C) images cut into ``patch`` x ``patch`` tokens; LoRA on its mixing layers."""

    def __init__(self, grid: tuple[int, int, int], n_classes: int, cfg: BackboneConfig, patch: int | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.grid = tuple(int(g) for g in grid)
        self.patch = cfg.patch if patch is None else patch
        h, w, c = self.grid
        if h % self.patch or w % self.patch:
            raise ValueError(f"m2le mixer: patch {self.patch} must divide the {h} x {w} inputs")
        n_tokens = (h // self.patch) * (w // self.patch)
        self.mixer = MLPMixer(n_tokens, self.patch ** 2 * c, cfg.dim, cfg.depth, cfg.token_hidden,
                              cfg.channel_hidden, n_classes)
        self._add_lora([tuple(lin.weight.shape) for lin in self.mixer.mixing_layers()])

    def _adapted(self) -> list[nn.Linear]:
        return self.mixer.mixing_layers()

    def forward_with(self, weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        return self.mixer(patchify(x, *self.grid, self.patch), weights)


def make_backbone(cfg: BackboneConfig, n_features: int, grid: tuple[int, int, int] | None = None,
                  patch: int | None = None, n_classes: int = 10) -> LoraBackbone:
    """The backbone ``cfg.kind`` for inputs of ``n_features`` laid out as ``grid`` (H, W, C; the mixer needs it)."""
    if cfg.kind == "mlp":
        return LoraMLP(n_features, n_classes, cfg)
    if grid is None or grid[0] * grid[1] * grid[2] != n_features:
        raise ValueError(f"m2le mixer: needs the inputs' image grid (H, W, C) with H*W*C = {n_features}; got {grid}")
    return LoraMixer(grid, n_classes, cfg, patch)


def local_labels(y: torch.Tensor, classes: tuple[int, ...]) -> torch.Tensor:
    """Position of each label among the task's classes (the logits a task reads)."""
    lookup = torch.full((int(max(classes)) + 1,), -1, dtype=torch.long)
    lookup[torch.as_tensor(classes)] = torch.arange(len(classes))
    if (y > max(classes)).any() or (lookup[y] < 0).any():
        raise ValueError(f"labels outside the task's classes {classes}")
    return lookup[y]


def accuracy(model: LoraBackbone, x: torch.Tensor, y: torch.Tensor, classes: tuple[int, ...]) -> float:
    with torch.no_grad():
        logits = model(x)[:, list(classes)]
    return float((logits.argmax(1) == local_labels(y, classes)).float().mean())


def pretrain(model: LoraBackbone, x: torch.Tensor, y: torch.Tensor, seed: int) -> list[float]:
    """Train backbone and head on the base task (Adam, full batch shuffles from ``seed``); returns losses."""
    cfg = model.cfg
    g = torch.Generator().manual_seed(seed)
    params = model.backbone_parameters()
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


def fisher_diag(model: LoraBackbone, x: torch.Tensor, y: torch.Tensor, classes: tuple[int, ...]) -> list[torch.Tensor]:
    """Diagonal empirical Fisher of each adapted layer's dense weight at the current weights; (out, in) each."""
    weights = [w.detach() for w in model.weights()]
    cls = torch.as_tensor(classes)
    target = local_labels(y, classes)

    def loss_one(ws, xi, yi):
        return F.cross_entropy(model.forward_with(ws, xi[None])[:, cls], yi[None])

    grads = torch.func.vmap(torch.func.grad(loss_one), in_dims=(None, 0, 0))(weights, x, target)
    return [(g.detach() ** 2).mean(0) for g in grads]
