"""Attention pooling blocks shared by every multiple-instance model of the project.

:class:`GatedAttention` is the one gated-attention block (Ilse et al., "Attention-based Deep
Multiple Instance Learning", ICML 2018, Eq. 9): ABMIL pools patches with it and TMEvolve pools its
regions with it (the paper's "region-level gated-attention readout").
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["GatedAttention"]


class GatedAttention(nn.Module):
    """Gated attention pooling: ``a = softmax_i(w^T (tanh(V h_i) * sigmoid(U h_i)))``.

    Parameters
    ----------
    dim : int
        Instance dimension d.
    hidden : int
        Attention hidden size L (Ilse et al. use 128 for d = 500; CLAM uses d/2).
    dropout : float
        Dropout on the gated hidden units (CLAM convention).
    """

    def __init__(self, dim: int, hidden: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.V = nn.Linear(dim, hidden)
        self.U = nn.Linear(dim, hidden)
        self.w = nn.Linear(hidden, 1)
        self.drop = nn.Dropout(dropout)

    def scores(self, h: torch.Tensor) -> torch.Tensor:
        """Unnormalised attention logits, (N, d) -> (N,)."""
        gated = self.drop(torch.tanh(self.V(h)) * torch.sigmoid(self.U(h)))  # (N, L)
        return self.w(gated).squeeze(-1)                                      # (N,)

    def forward(self, h: torch.Tensor, log_prior: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Pool ``h`` (N, d) into one vector (d,); returns ``(pooled, weights (N,))``.

        ``log_prior`` (N,), optional, is added to the logits before the softmax (TMEvolve adds
        ``log pi_k`` so that an empty region gets no weight).
        """
        logits = self.scores(h)                      # (N,)
        if log_prior is not None:
            logits = logits + log_prior
        weights = torch.softmax(logits, dim=0)       # (N,) gated attention, Ilse et al. 2018, Eq. 9
        return weights @ h, weights                  # (d,), (N,)
