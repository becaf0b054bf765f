"""MUNKEY: a memory model that forgets by deleting keys, and the ordinary model it is compared with.

"Rethinking Machine Unlearning: Models Designed to Forget via Key Deletion" (arXiv 2603.15033).
No code is released; the definitions follow the paper's text as public reviews describe it
(spec ``papers/munkey.md``, "Reference definitions"):

- M1 memory: one entry per training instance; key ``k_i = E(x_i)`` from a *frozen* encoder ``E``,
  value ``v_i`` a *learnable* 128-d token (not a label vector).
- M2 read: a query image ``x`` retrieves the K = 4 nearest live keys (cosine) and the prediction is
  the ensemble (mean of logits) of ``head([h(x), v_j])`` over those K neighbours, ``h`` the trunk.
- M3 pathway dropout: in training each retrieved token is replaced by a learnable null token with
  probability ``p_null``, so the weights also learn to predict from the image alone.
  Pathway Sensitivity = accuracy when every token is the null token (the image-only pathway).
- M4 forgetting: mark the forget set's keys dead. No weight changes; the time taken is measured.

The ordinary model has the same trunk and a head of the same shape fed ``[h(x), 0]`` (no memory),
so the two have the same parameter count up to the value tokens.

Choices the paper leaves open
- Ensemble of logits, not of probabilities: a single memorised neighbour can then carry its
  instance's label (with probabilities the three other neighbours outvote it by construction).
- ``p_null = 0.5``; AdamW, lr 3e-3, full-batch-free minibatches of 128; the values get weight decay
  like the weights.
- In training an instance retrieves itself (its key is the nearest): that is where its
  instance-specific signal is written; after deletion it reads its K nearest *other* keys, like an
  unseen image.

Measured (digits, 5% canary labels, 2026-12-04): the weights memorise too. With p_null 0.5 (and
also 0.9 with weight decay 0.05, one seed) the memory model still predicts most forget-set canaries
with their canary label after deletion (smoke: 0.72 of them vs 0.79 for the untouched ordinary
model and 0 for either oracle): the MLP trunk on 256-d features can fit 1,300 images alone, so key
deletion does not remove the instance-specific signal that the weight pathway also stored. The
paper's recipe presumably relies on a frozen backbone with little trainable capacity; a smaller
trunk (or a frozen trunk with a linear head) is the first thing to try.

Deviations
- The frozen encoder is a fixed random convolutional map (``repro.papers.munkey.synth``), not a
  pretrained ViT-B/16; the trunk is an MLP on those features, not a ViT.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["MemoryConfig", "MemoryModel", "PlainModel", "train_model", "predict_logits", "knn_predict",
           "nearest_keys"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MemoryConfig:
    hidden: int = 128      # trunk width
    value_dim: int = 128   # learnable value token (spec: 128-d)
    k: int = 4             # nearest keys read (spec: K = 4)
    p_null: float = 0.5    # pathway dropout probability
    epochs: int = 60
    batch_size: int = 128
    lr: float = 3e-3
    weight_decay: float = 1e-4


def nearest_keys(queries: torch.Tensor, keys: torch.Tensor, alive: torch.Tensor, k: int) -> torch.Tensor:
    """Indices (B, k) of the k nearest live keys by cosine similarity (M2); dead keys are never read."""
    if int(alive.sum()) < k:
        raise ValueError(f"only {int(alive.sum())} live keys left; K = {k} needs at least that many")
    sim = F.normalize(queries, dim=1) @ F.normalize(keys, dim=1).T  # (B, N)
    sim = sim.masked_fill(~alive[None, :], float("-inf"))
    return sim.topk(k, dim=1).indices


class _Trunk(nn.Module):
    def __init__(self, in_dim: int, hidden: int, value_dim: int, n_classes: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(hidden + value_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))
        self.value_dim = value_dim


class PlainModel(_Trunk):
    """The ordinary model: trunk and head of the memory model with the memory slot held at zero."""

    def forward(self, x: torch.Tensor, idx: torch.Tensor | None = None) -> torch.Tensor:
        h = self.trunk(x)  # (B, H)
        return self.head(torch.cat([h, h.new_zeros(len(h), self.value_dim)], dim=1))  # (B, C)


class MemoryModel(_Trunk):
    """Trunk + key-value memory (M1-M3). ``keys`` are frozen features of the training images."""

    def __init__(self, keys: torch.Tensor, n_classes: int, cfg: MemoryConfig) -> None:
        super().__init__(keys.shape[1], cfg.hidden, cfg.value_dim, n_classes)
        self.cfg = cfg
        self.register_buffer("keys", keys.clone())                            # (N, D), frozen
        self.register_buffer("alive", torch.ones(len(keys), dtype=torch.bool))  # deletion mask (M4)
        self.values = nn.Parameter(0.01 * torch.randn(len(keys), cfg.value_dim))  # (N, V), learnable
        self.null = nn.Parameter(torch.zeros(cfg.value_dim))

    def forward(self, x: torch.Tensor, p_null: float = 0.0, image_only: bool = False) -> torch.Tensor:
        h = self.trunk(x)                                                     # (B, H)
        nn_idx = nearest_keys(x, self.keys, self.alive, self.cfg.k)           # (B, K)
        v = self.values[nn_idx]                                               # (B, K, V)
        drop = torch.rand(v.shape[:2], device=v.device) < p_null if p_null > 0 else None
        if image_only:
            v = self.null.expand_as(v)
        elif drop is not None:
            v = torch.where(drop[..., None], self.null.expand_as(v), v)       # pathway dropout (M3)
        hk = h[:, None, :].expand(-1, v.shape[1], -1)                         # (B, K, H)
        return self.head(torch.cat([hk, v], dim=2)).mean(dim=1)               # ensemble of logits (M2); (B, C)

    def delete(self, idx: np.ndarray | torch.Tensor) -> float:
        """Forget instances ``idx`` by deleting their keys (M4); returns the seconds it took."""
        start = time.perf_counter()
        self.alive[torch.as_tensor(idx, dtype=torch.long)] = False
        return time.perf_counter() - start


def train_model(model: nn.Module, x: torch.Tensor, y: torch.Tensor, cfg: MemoryConfig, seed: int) -> nn.Module:
    """Cross-entropy training with AdamW; the memory model trains with pathway dropout (M3)."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # the dropout masks draw from the global stream; fixed for determinism
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    kwargs = {"p_null": cfg.p_null} if isinstance(model, MemoryModel) else {}
    model.train()
    for _ in range(cfg.epochs):
        for batch in torch.randperm(len(x), generator=gen).split(cfg.batch_size):
            loss = F.cross_entropy(model(x[batch], **kwargs), y[batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    return model


@torch.no_grad()
def predict_logits(model: nn.Module, x: torch.Tensor, **kwargs) -> torch.Tensor:
    model.eval()
    return model(x, **kwargs)


def knn_predict(keys: torch.Tensor, labels: torch.Tensor, alive: torch.Tensor, queries: torch.Tensor, k: int,
                n_classes: int) -> torch.Tensor:
    """The nearest-neighbour baseline: vote counts (B, C) of the k nearest live keys; forgets by deletion too."""
    idx = nearest_keys(queries, keys, alive, k)                               # (B, k)
    return F.one_hot(labels[idx], n_classes).sum(dim=1).float()
