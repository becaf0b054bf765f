"""The AIM warm-up of MATT (attention-influence modelling) and the networks it reads.

Reference definitions (spec; the public code Goader/matt, fork ybochkov/matt at 6510a1e with fb9ba34):

- For one text, the teacher is the source model on the source tokenisation, the student the same
  network with the target embeddings on the target tokenisation. Segments are the smallest spans
  both tokenisers cut at (:func:`repro.papers.matt.tokens.align_segments`).
- At one layer (about a third of the depth; the model is truncated after it), per attention head
  h, for every pair of segments i < j: the influence of segment i on the last token of segment j is
  ``sum_{t in i} a_h(last_j, t) v_h(t)``, the attention-weighted sum of the value vectors over i's
  tokens (values before the output projection). Raw attention weights are not the target.
- Loss: mean squared error between student and teacher influences over all pairs, heads and rows.
  Pairs are formed per row and per head (the fork's fix of the original's mis-pairing at batch-row
  and head edges); here each row's pairs are built from that row's own segments.
- Only the new input embedding rows are trained, from FOCUS; AdamW, constant learning rate (1e-4 in
  the reference), batch 4, weight decay 0.

Networks: :class:`TinyNet` (repro.llm.tiny's GPT-2 layout, tied head) and :class:`HFNet` (a
Hugging Face Llama-family model such as SmolLM2, tied head). Both take the embedding matrix as an
argument, so the source rows stay fixed and only the new rows are a parameter.
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

__all__ = ["TinyNet", "HFNet", "influences", "aim_loss", "warm_up", "AimRow"]


class TinyNet:
    """A :class:`repro.llm.tiny.TinyGPT` read with an explicit (tied) embedding matrix."""

    def __init__(self, model) -> None:
        self.model = model.eval().requires_grad_(False)
        self.n_layers = model.cfg.n_layer
        self.context = model.cfg.context

    @property
    def source_embeddings(self) -> torch.Tensor:
        return self.model.wte.weight

    def _embed(self, ids, W):
        pos = torch.arange(ids.shape[1]).clamp(max=self.context - 1)
        return F.embedding(ids, W) + self.model.wpe(pos)[None]

    def _allowed(self, T):
        return torch.ones(T, T, dtype=torch.bool).tril()[None].expand(1, T, T)

    def logits(self, ids: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        """(B, T, V) next-token logits of right-padded ``ids`` (B, T)."""
        x, allowed = self._embed(ids, W), self._allowed(ids.shape[1])
        for block in self.model.blocks:
            x = block(x, allowed)
        return self.model.ln_f(x) @ W.T

    def attention(self, ids: torch.Tensor, W: torch.Tensor, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention weights (B, H, T, T) and value vectors (B, H, T, d_head) of block ``layer``; the
        blocks after it are never run."""
        x, allowed = self._embed(ids, W), self._allowed(ids.shape[1])
        for block in self.model.blocks[:layer]:
            x = block(x, allowed)
        attn = self.model.blocks[layer].attn
        B, T, C = x.shape
        q, k, v = attn.qkv(self.model.blocks[layer].ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, attn.n_head, C // attn.n_head).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(C // attn.n_head)
        scores = scores.masked_fill(~allowed[:, None], float("-inf"))
        return scores.softmax(-1), v


class HFNet:
    """A Hugging Face Llama-family causal LM with tied embeddings (SmolLM2) read the same way."""

    def __init__(self, model) -> None:
        if not model.config.tie_word_embeddings:
            raise ValueError("HFNet needs a model with tied input and output embeddings")
        model.config._attn_implementation = "eager"  # attention weights are read
        self.model = model.eval().requires_grad_(False)
        self.n_layers = model.config.num_hidden_layers
        self.context = model.config.max_position_embeddings

    @property
    def source_embeddings(self) -> torch.Tensor:
        return self.model.get_input_embeddings().weight

    def logits(self, ids, W):
        h = self.model.model(inputs_embeds=F.embedding(ids, W)).last_hidden_state
        return h @ W.T

    def attention(self, ids, W, layer):
        inner = self.model.model
        layers = inner.layers
        captured = {}
        hook = layers[layer].self_attn.v_proj.register_forward_hook(lambda m, i, o: captured.__setitem__("v", o))
        try:
            inner.layers = layers[:layer + 1]
            out = inner(inputs_embeds=F.embedding(ids, W), output_attentions=True)
        finally:
            inner.layers = layers
            hook.remove()
        A = out.attentions[-1]  # (B, H, T, T)
        B, T = ids.shape
        cfg = self.model.config
        d = cfg.hidden_size // cfg.num_attention_heads
        v = captured["v"].view(B, T, cfg.num_key_value_heads, d).transpose(1, 2)
        return A, v.repeat_interleave(cfg.num_attention_heads // cfg.num_key_value_heads, dim=1)


def influences(A: torch.Tensor, V: torch.Tensor, segments: list[tuple[int, int]]) -> torch.Tensor:
    """Per head, the influence of each segment i on the last token of each later segment j:
    ``sum_{t in i} A[h, last_j, t] V[h, t]`` for every pair i < j of one row; (H, P, d) with pairs in
    the order of ``torch.tril_indices(S, S, -1)`` (j > i).

    A : (H, T, T) attention weights of one row; V : (H, T, d) its value vectors;
    segments : token index ranges ``(start, stop)`` of that row, in order.
    """
    S, T = len(segments), A.shape[-1]
    member = torch.zeros(S, T, dtype=A.dtype)
    for s, (a, b) in enumerate(segments):
        member[s, a:b] = 1.0
    last = torch.tensor([b - 1 for _, b in segments])
    out = torch.einsum("hjt,it,htd->hjid", A[:, last, :], member, V)  # (H, S_j, S_i, d)
    j, i = torch.tril_indices(S, S, -1)
    return out[:, j, i]


class AimRow:
    """One text's two tokenisations (with BOS at 0) and their aligned segments (index ranges into the ids)."""

    def __init__(self, src_ids: list[int], tgt_ids: list[int], segments: list[tuple[int, int, int, int]]) -> None:
        self.src = torch.tensor(src_ids)[None]
        self.tgt = torch.tensor(tgt_ids)[None]
        self.src_segments = [(a + 1, b + 1) for a, b, _, _ in segments]
        self.tgt_segments = [(c + 1, d + 1) for _, _, c, d in segments]


def teacher_influences(net, W_src: torch.Tensor, row: AimRow, layer: int) -> torch.Tensor:
    with torch.no_grad():
        A, V = net.attention(row.src, W_src, layer)
    return influences(A[0], V[0], row.src_segments)


def aim_loss(net, W_tgt: torch.Tensor, rows: list[AimRow], targets: list[torch.Tensor], layer: int) -> torch.Tensor:
    """Mean over rows of the MSE between the student's influences (target embeddings ``W_tgt``) and
    the teacher's (``targets``, from :func:`teacher_influences`)."""
    losses = []
    for row, target in zip(rows, targets):
        A, V = net.attention(row.tgt, W_tgt, layer)
        losses.append(F.mse_loss(influences(A[0], V[0], row.tgt_segments), target))
    return torch.stack(losses).mean()


def warm_up(net, W_src: torch.Tensor, new_init: torch.Tensor, rows: list[AimRow], *, layer: int, steps: int,
            lr: float, batch_size: int, generator: torch.Generator,
            teacher_W: torch.Tensor | None = None) -> tuple[torch.Tensor, list[float], int]:
    """Train the new embedding rows (from ``new_init``) on the AIM loss; returns the rows, the loss per
    step and the number of target tokens the student read. The teacher reads ``teacher_W`` (default
    ``W_src``: source ids never reach the new rows)."""
    teacher_W = W_src if teacher_W is None else teacher_W
    rows = [r for r in rows if len(r.src_segments) >= 2]
    if not rows:
        raise ValueError("AIM: no text has two aligned segments")
    cache: dict[int, torch.Tensor] = {}
    new = torch.nn.Parameter(new_init.clone())
    opt = torch.optim.AdamW([new], lr=lr, weight_decay=0.0)
    losses, tokens = [], 0
    for _ in range(steps):
        pick = torch.randint(len(rows), (batch_size,), generator=generator).tolist()
        for k in pick:
            if k not in cache:
                cache[k] = teacher_influences(net, teacher_W, rows[k], layer)
        loss = aim_loss(net, torch.cat([W_src, new]), [rows[k] for k in pick], [cache[k] for k in pick], layer)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        tokens += sum(rows[k].tgt.shape[1] for k in pick)
    return new.detach(), losses, tokens
