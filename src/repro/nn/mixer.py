"""MLP-Mixer (Tolstikhin et al., NeurIPS 2021, arXiv 2105.01601) in plain torch, for small images on CPU.

:class:`MLPMixer` maps tokens (N, T, P) to logits (N, K): a per-token linear embedding to ``dim``
channels, ``depth`` mixer blocks, a layer norm, mean pooling over tokens and a linear head. Each
block is (Eq. 1 of the paper, pre-norm, residual, GELU):

    U = X + W2_tok GELU(W1_tok LN(X)^T)^T        token mixing: an MLP across tokens, per channel
    Y = U + W2_ch GELU(W1_ch LN(U))              channel mixing: an MLP across channels, per token

The four mixing matrices of every block (:meth:`MLPMixer.mixing_layers`, in the order token 1,
token 2, channel 1, channel 2, block by block) may be replaced at call time, ``forward(tokens,
weights)``: the module's biases, norms, embedding and head are used as they are, the given
weights (same shapes as ``layer.weight``) stand in for the mixing layers' own. A caller adds its
own updates to them (LoRA, merged task updates, perturbations) and ``torch.func`` differentiates
the output with respect to those dense weights (per-example gradients, Fisher curvature).

:func:`patchify` cuts flat images stored row-major as H x W x C into non-overlapping
``patch`` x ``patch`` tokens (row-major over the patch grid, each token its pixels row-major with
channels last), the layout of ``PatchTransformer.tokens`` in ``repro.methods.immunization``
generalised to any side and channel count.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["MLPMixer", "patchify"]


def patchify(x: torch.Tensor, height: int, width: int, channels: int, patch: int) -> torch.Tensor:
    """(N, H*W*C) flat HWC images -> (N, (H/p)(W/p), p*p*C) tokens."""
    if patch < 1 or height % patch or width % patch:
        raise ValueError(f"patchify: patch {patch} must divide the image sides {height} x {width}")
    if x.ndim != 2 or x.shape[1] != height * width * channels:
        raise ValueError(f"patchify: need inputs (N, {height * width * channels}) for {height} x {width} x "
                         f"{channels} images; got {tuple(x.shape)}")
    gh, gw = height // patch, width // patch
    x = x.reshape(-1, gh, patch, gw, patch, channels).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, gh * gw, patch * patch * channels)


class MLPMixer(nn.Module):
    """Tokens (N, ``n_tokens``, ``token_dim``) -> logits (N, ``n_out``).

    Parameters
    ----------
    n_tokens, token_dim : int
        Tokens per input and features per token (patches and their pixels).
    dim : int
        Channels C of the token representations.
    depth : int
        Mixer blocks.
    token_hidden, channel_hidden : int
        Hidden widths of the token-mixing (D_S) and channel-mixing (D_C) MLPs.
    n_out : int
        Outputs of the linear head.
    """

    def __init__(self, n_tokens: int, token_dim: int, dim: int, depth: int, token_hidden: int,
                 channel_hidden: int, n_out: int) -> None:
        super().__init__()
        if min(n_tokens, token_dim, dim, depth, token_hidden, channel_hidden, n_out) < 1:
            raise ValueError("MLPMixer: every size must be >= 1; got "
                             f"n_tokens={n_tokens}, token_dim={token_dim}, dim={dim}, depth={depth}, "
                             f"token_hidden={token_hidden}, channel_hidden={channel_hidden}, n_out={n_out}")
        self.n_tokens, self.token_dim = n_tokens, token_dim
        self.embed = nn.Linear(token_dim, dim)
        self.blocks = nn.ModuleList(nn.ModuleDict({
            "norm1": nn.LayerNorm(dim), "token1": nn.Linear(n_tokens, token_hidden),
            "token2": nn.Linear(token_hidden, n_tokens), "norm2": nn.LayerNorm(dim),
            "channel1": nn.Linear(dim, channel_hidden), "channel2": nn.Linear(channel_hidden, dim)})
            for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_out)

    def mixing_layers(self) -> list[nn.Linear]:
        """The replaceable linear layers: token 1, token 2, channel 1, channel 2 of each block in turn."""
        return [b[k] for b in self.blocks for k in ("token1", "token2", "channel1", "channel2")]

    def forward(self, tokens: torch.Tensor, weights: list[torch.Tensor] | None = None) -> torch.Tensor:
        if tokens.ndim != 3 or tokens.shape[1:] != (self.n_tokens, self.token_dim):
            raise ValueError(f"MLPMixer: need tokens (N, {self.n_tokens}, {self.token_dim}); got {tuple(tokens.shape)}")
        layers = self.mixing_layers()
        ws = [lin.weight for lin in layers] if weights is None else weights
        if len(ws) != len(layers):
            raise ValueError(f"MLPMixer: need {len(layers)} mixing weights; got {len(ws)}")
        h = self.embed(tokens)  # (N, T, C)
        for k, b in enumerate(self.blocks):
            w_t1, w_t2, w_c1, w_c2 = ws[4 * k: 4 * k + 4]
            u = b["norm1"](h).transpose(1, 2)  # (N, C, T): mix across tokens, per channel
            u = F.linear(F.gelu(F.linear(u, w_t1, b["token1"].bias)), w_t2, b["token2"].bias)
            h = h + u.transpose(1, 2)
            v = F.linear(F.gelu(F.linear(b["norm2"](h), w_c1, b["channel1"].bias)), w_c2, b["channel2"].bias)
            h = h + v  # (N, T, C)
        return self.head(self.norm(h).mean(1))  # (N, K)
