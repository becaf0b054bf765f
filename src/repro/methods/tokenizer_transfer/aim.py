"""The AIM warm-up of MATT (attention-influence modelling) and the networks it reads.

Definitions as in the reference code, read for this build in the fork ybochkov/matt
(``matt/training/aim_impl.py`` at fb9ba34: ``causal_word_pair_ids``, ``get_aim_states``;
``matt/training/aim.py``, ``matt/modeling/base.py``, ``matt/config.py`` and ``matt/preparation.py`` at
6510a1e):

- For one text, the teacher is the source model on the source tokenisation, the student the same
  network with the target embeddings on the target tokenisation. Segments ("words") are the
  smallest spans both tokenisers cut at (:func:`repro.papers.matt.tokens.align_segments`); special
  tokens (BOS) belong to no segment.
- The model is truncated to its first ``n_layers`` layers (about a third of the depth) and AIM reads
  the attention of the last kept layer (the reference's ``attentions[n_layers - 1]`` and the value
  states of that layer's key-value cache: after ``v_proj``, before the output projection, shared
  key-value heads repeated to every query head).
- Per head h, for every segment j and every segment i <= j (the segment itself included: the
  reference's causal mask keeps the diagonal): the influence of i on the last token of j is
  ``sum_{t in i} a_h(last_j, t) v_h(t)``. Raw attention weights are not the target.
- Pairs are numbered per row and per head, j then i (the fork's fix of the original's global
  numbering, which merged or dropped pairs at batch-row and head edges); here each row's pairs are
  built from that row's own segments, so a pair can never straddle two rows.
- Loss: ``nn.MSELoss()`` (mean reduction) over every pair of every row and head of the batch and
  every value dimension, pooled: a row with more pairs weighs more.
- Only the new input embedding rows are trained (the reference's frozen-overlap mask, as its
  example uses), from FOCUS; AdamW with torch's defaults (weight decay 0.01), constant learning
  rate 1e-4, batch 4, gradient norm clipped at 1.0; batches are drawn without replacement from a
  shuffled pass over the texts (a new shuffle each pass), as the reference's shuffled DataLoader.

Deviations: float32 on CPU (the reference trains in bf16 mixed precision); the student shares the
teacher's frozen network (the reference loads two copies of the same weights).

Networks: :class:`TinyNet` (repro.llm.tiny's GPT-2 layout, tied head) and :class:`HFNet` (a
Hugging Face Llama-family model such as SmolLM2, tied head). Both take the embedding matrix as an
argument, so the source rows stay fixed and only the new rows are a parameter.
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

__all__ = ["TinyNet", "HFNet", "influences", "aim_loss", "batches", "warm_up", "AimRow"]


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

    def attention(self, ids: torch.Tensor, W: torch.Tensor, n_layers: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention weights (B, H, T, T) and value vectors (B, H, T, d_head) of the last of the first
        ``n_layers`` blocks (block ``n_layers - 1``); the blocks after it are never run."""
        _check_depth(n_layers, self.n_layers)
        x, allowed = self._embed(ids, W), self._allowed(ids.shape[1])
        for block in self.model.blocks[:n_layers - 1]:
            x = block(x, allowed)
        last = self.model.blocks[n_layers - 1]
        attn = last.attn
        B, T, C = x.shape
        q, k, v = attn.qkv(last.ln1(x)).split(C, dim=2)
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

    def attention(self, ids, W, n_layers):
        """As :meth:`TinyNet.attention`: the model truncated to its first ``n_layers`` layers."""
        _check_depth(n_layers, self.n_layers)
        inner = self.model.model
        layers = inner.layers
        captured = {}
        hook = layers[n_layers - 1].self_attn.v_proj.register_forward_hook(lambda m, i, o: captured.__setitem__("v", o))
        try:
            inner.layers = layers[:n_layers]
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


def _check_depth(n_layers: int, depth: int) -> None:
    if not 1 <= n_layers <= depth:
        raise ValueError(f"AIM n_layers must be in 1..{depth} (the model's depth), got {n_layers}")


def influences(A: torch.Tensor, V: torch.Tensor, segments: list[tuple[int, int]]) -> torch.Tensor:
    """Per head, the influence of each segment i on the last token of each segment j at or after it:
    ``sum_{t in i} A[h, last_j, t] V[h, t]`` for every pair i <= j of one row; (H, S(S+1)/2, d) with
    pairs in the order of ``torch.tril_indices(S, S)`` (j ascending, then i ascending), the
    reference's order within one row and head.

    A : (H, T, T) attention weights of one row; V : (H, T, d) its value vectors;
    segments : token index ranges ``(start, stop)`` of that row, in order.
    """
    S, T = len(segments), A.shape[-1]
    member = torch.zeros(S, T, dtype=A.dtype)
    for s, (a, b) in enumerate(segments):
        member[s, a:b] = 1.0
    last = torch.tensor([b - 1 for _, b in segments])
    out = torch.einsum("hjt,it,htd->hjid", A[:, last, :], member, V)  # (H, S_j, S_i, d)
    j, i = torch.tril_indices(S, S)
    return out[:, j, i]


class AimRow:
    """One text's two tokenisations (with BOS at 0) and their aligned segments (index ranges into the ids)."""

    def __init__(self, src_ids: list[int], tgt_ids: list[int], segments: list[tuple[int, int, int, int]]) -> None:
        self.src = torch.tensor(src_ids)[None]
        self.tgt = torch.tensor(tgt_ids)[None]
        self.src_segments = [(a + 1, b + 1) for a, b, _, _ in segments]
        self.tgt_segments = [(c + 1, d + 1) for _, _, c, d in segments]


def teacher_influences(net, W_src: torch.Tensor, row: AimRow, n_layers: int) -> torch.Tensor:
    with torch.no_grad():
        A, V = net.attention(row.src, W_src, n_layers)
    return influences(A[0], V[0], row.src_segments)


def aim_loss(net, W_tgt: torch.Tensor, rows: list[AimRow], targets: list[torch.Tensor], n_layers: int) -> torch.Tensor:
    """The MSE between the student's influences (target embeddings ``W_tgt``) and the teacher's
    (``targets``, from :func:`teacher_influences`), pooled over every pair, head, value dimension and
    row of the batch (``nn.MSELoss()`` on the concatenated pairs, as the reference)."""
    student, teacher = [], []
    for row, target in zip(rows, targets):
        A, V = net.attention(row.tgt, W_tgt, n_layers)
        student.append(influences(A[0], V[0], row.tgt_segments).reshape(-1))
        teacher.append(target.reshape(-1))
    return F.mse_loss(torch.cat(student), torch.cat(teacher))


def batches(n: int, batch_size: int, steps: int, generator: torch.Generator) -> list[list[int]]:
    """``steps`` batches of row indices: consecutive slices of a shuffled pass over ``range(n)`` (the
    last slice of a pass may be short), a new shuffle for every pass, as a shuffled DataLoader."""
    out: list[list[int]] = []
    while len(out) < steps:
        order = torch.randperm(n, generator=generator).tolist()
        out += [order[k:k + batch_size] for k in range(0, n, batch_size)]
    return out[:steps]


WEIGHT_DECAY = 0.01  # torch.optim.AdamW's default, which the reference keeps
CLIP_NORM = 1.0  # the reference's gradient_clip_val (norm)


def warm_up(net, W_src: torch.Tensor, new_init: torch.Tensor, rows: list[AimRow], *, n_layers: int, steps: int,
            lr: float, batch_size: int, generator: torch.Generator,
            teacher_W: torch.Tensor | None = None) -> tuple[torch.Tensor, list[float], int]:
    """Train the new embedding rows (from ``new_init``) on the AIM loss; returns the rows, the loss per
    step and the number of target tokens the student read. The teacher reads ``teacher_W`` (default
    ``W_src``: source ids never reach the new rows)."""
    teacher_W = W_src if teacher_W is None else teacher_W
    rows = [r for r in rows if r.src_segments]
    if not rows:
        raise ValueError("AIM: no text has an aligned segment")
    cache: dict[int, torch.Tensor] = {}
    new = torch.nn.Parameter(new_init.clone())
    opt = torch.optim.AdamW([new], lr=lr, weight_decay=WEIGHT_DECAY)
    losses, tokens = [], 0
    for pick in batches(len(rows), batch_size, steps, generator):
        for k in pick:
            if k not in cache:
                cache[k] = teacher_influences(net, teacher_W, rows[k], n_layers)
        loss = aim_loss(net, torch.cat([W_src, new]), [rows[k] for k in pick], [cache[k] for k in pick], n_layers)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([new], CLIP_NORM)
        opt.step()
        losses.append(loss.item())
        tokens += sum(rows[k].tgt.shape[1] for k in pick)
    return new.detach(), losses, tokens
