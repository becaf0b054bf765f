"""Next-token training of the new embedding rows only: the baseline MATT is compared with.

The paper's optimisation baseline ("FOCUS w/ NTP", and the reference code's README: "NTP with frozen
non-embedding weights") trains the embeddings by next-token prediction with every other weight
frozen, from the FOCUS initialisation. Here, as for AIM (:mod:`.aim`, the reference's frozen-overlap
mask for a single-language extension), only the rows of the new tokens train; the source rows and the
network stay fixed. With a tied head (SmolLM2, the tiny GPT) the same rows are the output embeddings.

Choices the reference leaves open (its code has no NTP trainer): cross-entropy over every position of a
window (mean), AdamW with no weight decay and no gradient clipping, a constant learning rate.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

__all__ = ["NextTokenTrainer"]


class NextTokenTrainer:
    """AdamW on the new rows (from ``new_init``) against the next-token loss of the network ``net`` read
    with the embedding matrix ``[W_src; new]`` (``net.logits(ids, W)``, as :class:`.aim.TinyNet`)."""

    def __init__(self, net, W_src: torch.Tensor, new_init: torch.Tensor, lr: float) -> None:
        self.net, self.W_src = net, W_src
        self.param = torch.nn.Parameter(new_init.clone())
        self.opt = torch.optim.AdamW([self.param], lr=lr, weight_decay=0.0)

    @property
    def rows(self) -> torch.Tensor:
        """The new rows as trained so far (detached)."""
        return self.param.detach()

    def loss(self, batch: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy of ``batch`` (B, T + 1): positions 0..T-1 predict 1..T."""
        logits = self.net.logits(batch[:, :-1], torch.cat([self.W_src, self.param]))  # (B, T, V)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))

    def step(self, batch: torch.Tensor) -> float:
        """One AdamW step on ``batch``; returns its loss before the step."""
        loss = self.loss(batch)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss.item()
