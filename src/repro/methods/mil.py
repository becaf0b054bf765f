"""Multiple-instance learning baselines for whole-slide images, registered by name.

Every model maps one slide (a :class:`SlideBag` of patch features on the patch grid) to a vector of
task outputs, through the same three stages: a patch encoder ``fc`` (Linear D -> d, ReLU,
dropout; CLAM's ``attention_net[0]``), an aggregator that differs per method, and a linear head
d -> out. ``forward(bag)`` returns ``{"out": (out,), "aux_loss": scalar}``.

Registered in :data:`MIL_MODELS` (the ``{method}`` wildcard of ``tmevolve_train`` is the key):

- ``mean``: mean pooling of the encoded patches.
- ``abmil``: gated attention pooling (Ilse et al., ICML 2018), :class:`repro.nn.attention.GatedAttention`.
- ``transmil``: TransMIL (Shao et al., NeurIPS 2021): class token, two Nystrom-attention layers
  (Xiong et al., AAAI 2021) with the PPEG positional encoder between them; a CPU re-implementation
  of the public CUDA-only code (``nystrom_attention`` with 8 heads, d/2 landmarks, 6 Moore-Penrose
  iterations, residual depthwise conv of kernel 33; PPEG = 7/5/3 depthwise convs on the token
  sequence folded into a square).
- ``graphmil``: Patch-GCN style graph MIL (Chen et al., MICCAI 2021): kNN graph (k = 8) on patch
  coordinates, residual graph-convolution layers, the layers' outputs concatenated, gated attention
  readout. Choice: a mean-aggregation GCN layer ``h + ReLU(LN(W [h ; mean_N(i) h]))`` stands in for
  Patch-GCN's GENConv (no torch_geometric dependency).
- ``dsmil``: DSMIL (Li et al., CVPR 2021): an instance scorer picks the critical instance; bag
  attention is the softmax of query similarity to it; the output averages the bag head and the
  head applied to the critical instance. Choice: one scorer for every task (the original has one
  per class) so the same model serves survival bins, classes and a regression target.

TMEvolve (:mod:`repro.methods.tmevolve`) registers itself, its ablations and its Q x K grid into the
same registry when it is imported; this module never imports it.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from repro.nn.attention import GatedAttention
from repro.nn.graph import gather_neighbours, grid_neighbours, grid_positions, knn_neighbours
from repro.registry import Registry

__all__ = ["SlideBag", "MIL_MODELS", "create_mil_model", "PatchEncoder", "MeanMIL", "ABMIL", "TransMIL",
           "GraphMIL", "DSMIL"]

log = logging.getLogger(__name__)

MIL_MODELS: Registry = Registry("MIL model")


@dataclass
class SlideBag:
    """One slide as a bag of patches on a grid (tensors on one device).

    Attributes
    ----------
    x : (N, D) float32 patch features.
    grid : (N, 2) float32 patch positions in grid units (x, y).
    nbr8 : (N, 8) int64 8-neighbours on the grid, -1 where absent.
    knn : (N, k) int64 k nearest patches by coordinates, -1 padding.
    patch_types : (N,) int16 ground-truth tissue type per patch (-1 unknown), numpy, not used in training.
    slide_id : str
    """

    x: torch.Tensor
    grid: torch.Tensor
    nbr8: torch.Tensor
    knn: torch.Tensor
    patch_types: np.ndarray
    slide_id: str = ""

    @classmethod
    def from_arrays(cls, features: np.ndarray, coords: np.ndarray, step: int, *, patch_types=None,
                    k: int = 8, slide_id: str = "") -> "SlideBag":
        """Build the bag from contract arrays (level-0 coords and the grid step in level-0 pixels)."""
        features = np.asarray(features, dtype=np.float32)
        if features.ndim != 2 or len(features) != len(coords) or len(features) == 0:
            raise ValueError(f"slide {slide_id!r}: features {features.shape} and coords {np.shape(coords)} disagree")
        grid = grid_positions(coords, step)
        types = np.full(len(grid), -1, np.int16) if patch_types is None else np.asarray(patch_types, np.int16)
        return cls(x=torch.from_numpy(features), grid=torch.from_numpy(grid.astype(np.float32)),
                   nbr8=torch.from_numpy(grid_neighbours(grid)), knn=torch.from_numpy(knn_neighbours(grid, k)),
                   patch_types=types, slide_id=slide_id)

    @property
    def n(self) -> int:
        return self.x.shape[0]


class PatchEncoder(nn.Sequential):
    """Linear D -> d, ReLU, dropout: the patch encoder every model starts with (CLAM ``fc``)."""

    def __init__(self, in_dim: int, dim: int, dropout: float) -> None:
        super().__init__(nn.Linear(in_dim, dim), nn.ReLU(), nn.Dropout(dropout))


class MeanMIL(nn.Module):
    """Mean pooling of encoded patches."""

    def __init__(self, in_dim: int, out_dim: int, *, dim: int = 512, dropout: float = 0.25, **_: object) -> None:
        super().__init__()
        self.fc = PatchEncoder(in_dim, dim, dropout)
        self.head = nn.Linear(dim, out_dim)

    def forward(self, bag: SlideBag) -> dict:
        h = self.fc(bag.x)                       # (N, d)
        return {"out": self.head(h.mean(0)), "aux_loss": h.new_zeros(())}


class ABMIL(nn.Module):
    """Gated-attention MIL (Ilse et al., ICML 2018)."""

    def __init__(self, in_dim: int, out_dim: int, *, dim: int = 512, dropout: float = 0.25, attn_hidden: int = 128,
                 **_: object) -> None:
        super().__init__()
        self.fc = PatchEncoder(in_dim, dim, dropout)
        self.attn = GatedAttention(dim, attn_hidden, dropout)
        self.head = nn.Linear(dim, out_dim)

    def forward(self, bag: SlideBag) -> dict:
        h = self.fc(bag.x)                       # (N, d)
        z, a = self.attn(h)                      # (d,), (N,)
        return {"out": self.head(z), "aux_loss": h.new_zeros(()), "attention": a}


# ----------------------------------------------------------------------------------------------
# TransMIL: Nystrom attention + PPEG


def moore_penrose_iter_pinv(x: torch.Tensor, iters: int = 6) -> torch.Tensor:
    """Iterative pseudo-inverse of Razavi et al. (2014), as in Nystromformer (Xiong et al., Eq. 16)."""
    abs_x = x.abs()
    col = abs_x.sum(dim=-1)
    row = abs_x.sum(dim=-2)
    z = x.transpose(-1, -2) / (col.amax(dim=-1, keepdim=True).unsqueeze(-1) * row.amax(dim=-1, keepdim=True).unsqueeze(-1))
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    for _ in range(iters):
        xz = x @ z
        z = 0.25 * z @ (13 * eye - xz @ (15 * eye - xz @ (7 * eye - xz)))
    return z


class NystromAttention(nn.Module):
    """Nystrom self-attention (Xiong et al., AAAI 2021) with segment-mean landmarks."""

    def __init__(self, dim: int, heads: int = 8, landmarks: int = 256, pinv_iters: int = 6,
                 conv_kernel: int = 33, dropout: float = 0.1) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"transmil: dim {dim} is not divisible by heads {heads}")
        self.heads, self.landmarks, self.pinv_iters = heads, landmarks, pinv_iters
        self.dim_head = dim // heads
        self.to_qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.to_out = nn.Sequential(nn.Linear(dim, dim), nn.Dropout(dropout))
        self.res_conv = nn.Conv2d(heads, heads, (conv_kernel, 1), padding=(conv_kernel // 2, 0), groups=heads, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        m = self.landmarks
        pad = (m - n % m) % m
        if pad:
            x = nn.functional.pad(x, (0, 0, pad, 0))                           # zeros in front, as nystrom_attention
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)                              # (B, n', dim) each
        q, k, v = (t.reshape(b, -1, self.heads, self.dim_head).transpose(1, 2) for t in (q, k, v))  # (B, h, n', dh)
        q = q * self.dim_head ** -0.5
        seg = q.shape[2] // m
        q_l = q.reshape(b, self.heads, m, seg, self.dim_head).mean(3)          # (B, h, m, dh) landmarks
        k_l = k.reshape(b, self.heads, m, seg, self.dim_head).mean(3)
        attn1 = torch.softmax(q @ k_l.transpose(-1, -2), dim=-1)                # (B, h, n', m)
        attn2 = torch.softmax(q_l @ k_l.transpose(-1, -2), dim=-1)              # (B, h, m, m)
        attn3 = torch.softmax(q_l @ k.transpose(-1, -2), dim=-1)                # (B, h, m, n')
        out = attn1 @ moore_penrose_iter_pinv(attn2, self.pinv_iters) @ (attn3 @ v)  # (B, h, n', dh)
        out = out + self.res_conv(v)
        out = out.transpose(1, 2).reshape(b, -1, self.heads * self.dim_head)  # (B, n', dim)
        return self.to_out(out)[:, -n:]


class TransLayer(nn.Module):
    def __init__(self, dim: int, heads: int, landmarks: int, dropout: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = NystromAttention(dim, heads=heads, landmarks=landmarks, dropout=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.attn(self.norm(x))


class PPEG(nn.Module):
    """Pyramid position encoding generator: depthwise 7/5/3 convolutions on the folded token square."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(dim, dim, 7, 1, 3, groups=dim)
        self.proj1 = nn.Conv2d(dim, dim, 5, 1, 2, groups=dim)
        self.proj2 = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)

    def forward(self, x: torch.Tensor, side: int) -> torch.Tensor:
        b, _, c = x.shape
        cls_token, feat = x[:, :1], x[:, 1:]                                   # (B, 1, d), (B, side^2, d)
        cnn = feat.transpose(1, 2).reshape(b, c, side, side)
        cnn = self.proj(cnn) + cnn + self.proj1(cnn) + self.proj2(cnn)
        return torch.cat([cls_token, cnn.flatten(2).transpose(1, 2)], dim=1)


class TransMIL(nn.Module):
    """TransMIL (Shao et al., NeurIPS 2021)."""

    def __init__(self, in_dim: int, out_dim: int, *, dim: int = 512, dropout: float = 0.25, heads: int = 8,
                 **_: object) -> None:
        super().__init__()
        self.fc = PatchEncoder(in_dim, dim, dropout)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.layer1 = TransLayer(dim, heads, max(dim // 2, 1), 0.1)
        self.ppeg = PPEG(dim)
        self.layer2 = TransLayer(dim, heads, max(dim // 2, 1), 0.1)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, out_dim)

    def forward(self, bag: SlideBag) -> dict:
        h = self.fc(bag.x).unsqueeze(0)                                        # (1, N, d)
        n = h.shape[1]
        side = math.ceil(math.sqrt(n))
        h = torch.cat([h, h[:, : side * side - n]], dim=1)                     # (1, side^2, d) wrap-pad, as TransMIL
        h = torch.cat([self.cls_token, h], dim=1)                              # (1, 1 + side^2, d)
        h = self.layer2(self.ppeg(self.layer1(h), side))
        z = self.norm(h)[0, 0]                                                 # (d,) class token
        return {"out": self.head(z), "aux_loss": z.new_zeros(())}


# ----------------------------------------------------------------------------------------------
# Graph MIL (Patch-GCN style)


class GraphMIL(nn.Module):
    """Patch-GCN style: residual mean-aggregation GCN on the kNN graph, concatenated, gated attention."""

    def __init__(self, in_dim: int, out_dim: int, *, dim: int = 512, dropout: float = 0.25, attn_hidden: int = 128,
                 gcn_layers: int = 3, **_: object) -> None:
        super().__init__()
        self.fc = PatchEncoder(in_dim, dim, dropout)
        self.convs = nn.ModuleList(nn.Linear(2 * dim, dim) for _ in range(gcn_layers))
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(gcn_layers))
        self.phi = nn.Sequential(nn.Linear(dim * (gcn_layers + 1), dim), nn.ReLU(), nn.Dropout(dropout))
        self.attn = GatedAttention(dim, attn_hidden, dropout)
        self.head = nn.Linear(dim, out_dim)

    def forward(self, bag: SlideBag) -> dict:
        h = self.fc(bag.x)                                                     # (N, d)
        mask = (bag.knn >= 0).float()                                          # (N, k)
        deg = mask.sum(1, keepdim=True).clamp_min(1.0)
        layers = [h]
        for conv, norm in zip(self.convs, self.norms):
            agg = gather_neighbours(h, bag.knn).sum(1) / deg                   # (N, d) mean over kNN
            h = h + torch.relu(norm(conv(torch.cat([h, agg], dim=-1))))        # residual (DeepGCN res+)
            layers.append(h)
        h = self.phi(torch.cat(layers, dim=-1))                                # (N, d)
        z, a = self.attn(h)
        return {"out": self.head(z), "aux_loss": z.new_zeros(()), "attention": a}


# ----------------------------------------------------------------------------------------------
# DSMIL


class DSMIL(nn.Module):
    """Dual-stream MIL (Li et al., CVPR 2021) with one critical-instance scorer.

    Choice: the instance stream max-pools instance predictions with a sharp softmax (temperature
    ``tau``) over the scorer's outputs, so the scorer is trained end to end; the critical instance
    (argmax) sets the bag stream's query.
    """

    def __init__(self, in_dim: int, out_dim: int, *, dim: int = 512, dropout: float = 0.25, tau: float = 0.1,
                 **_: object) -> None:
        super().__init__()
        self.fc = PatchEncoder(in_dim, dim, dropout)
        self.scorer = nn.Linear(dim, 1)
        self.inst_head = nn.Linear(dim, out_dim)
        self.q = nn.Sequential(nn.Linear(dim, max(dim // 2, 1)), nn.Tanh())
        self.v = nn.Sequential(nn.Dropout(dropout), nn.Linear(dim, dim))
        self.head = nn.Linear(dim, out_dim)
        self.tau = tau

    def forward(self, bag: SlideBag) -> dict:
        h = self.fc(bag.x)                                                     # (N, d)
        s = self.scorer(h).squeeze(-1)                                         # (N,) instance scores
        crit = int(torch.argmax(s))                                            # critical instance
        out_inst = torch.softmax(s / self.tau, dim=0) @ self.inst_head(h)      # (out,) instance stream
        q = self.q(h)                                                          # (N, d/2)
        a = torch.softmax(q @ q[crit] / math.sqrt(q.shape[1]), dim=0)          # (N,) DSMIL Eq. 3
        z = a @ self.v(h)                                                      # (d,)
        out = 0.5 * (self.head(z) + out_inst)                                  # bag + instance streams
        return {"out": out, "aux_loss": z.new_zeros(()), "attention": a}


for _name, _cls in {"mean": MeanMIL, "abmil": ABMIL, "transmil": TransMIL, "graphmil": GraphMIL, "dsmil": DSMIL}.items():
    MIL_MODELS.register(_name)(_cls)


def create_mil_model(name: str, in_dim: int, out_dim: int, **cfg: object) -> nn.Module:
    """Build the registered model ``name``; a model defined elsewhere is known once its module is
    imported (``import repro.methods.tmevolve`` registers TMEvolve and its variants)."""
    return MIL_MODELS.create(name, in_dim=in_dim, out_dim=out_dim, **cfg)
