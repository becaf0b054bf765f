"""Tiny causal transformers trained from scratch here, behind the same interface as SmolLM2.

Papers that need several models of known, different capability (toolgap) or ground truth about
what a model has seen (incrimination) train these on a task corpus: :func:`train_tiny` returns a
:class:`repro.llm.torchlm.TorchLM`, so ``generate``, ``logprobs``, ``chat``, ``hidden_states`` and
LoRA work on it exactly as on the pretrained model.

The network is GPT-2 shaped (Radford et al. 2019; the layout of Karpathy's nanoGPT ``model.py``):
token + learned position embeddings, pre-LayerNorm blocks of causal self-attention and a GELU MLP,
a final LayerNorm and an output head tied to the token embedding. Text is tokenised as UTF-8 bytes
(no vocabulary to fit, nothing to download) plus three special tokens.

Choices
-------
- Bytes, not BPE: any corpus works at once and a model's "knowledge" maps to exact strings.
- A document is ``BOS + bytes + EOS``. A training window of ``context + 1`` tokens packs documents
  drawn uniformly at random, so every window starts at a document's BOS as a prompt does.
  (nanoGPT's ``get_batch`` cuts windows at random offsets of one stream instead; on a small corpus
  that leaves position 0 almost never a document start, and a model trained so does not complete
  its own training documents from their beginnings.)
- The chat template is plain text: ``<|user|>\\n...\\n<|assistant|>\\n`` per turn, EOS closes a turn.
- Hidden states follow the Hugging Face convention: index 0 is the embedding output, ``k`` the
  output of block ``k``, and the last one is taken after the final LayerNorm.
- Each position may always attend to itself, so the rows of left padding stay finite (their
  outputs are never read).
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from repro.io import atomic_open, atomic_path
from repro.logs import progress
from repro.llm.torchlm import TorchLM
from repro.seeding import torch_generator

__all__ = ["TinyConfig", "TinyTrainConfig", "TinyGPT", "TinyCore", "ByteTokenizer", "train_tiny", "save_tiny",
           "load_tiny", "tiny_lm"]

log = logging.getLogger(__name__)

BOS, EOS, PAD = 256, 257, 258


@dataclass(frozen=True)
class TinyConfig:
    """Shape of a tiny model (GPT-2 layout, Radford et al. 2019)."""

    n_layer: int = 2
    """transformer blocks"""
    n_head: int = 4
    """attention heads (d_model must be divisible by it)"""
    d_model: int = 128
    """residual width"""
    context: int = 128
    """longest sequence, in bytes"""
    dropout: float = 0.0
    """dropout in attention and MLP while training (0: training is exactly reproducible)"""
    vocab_size: int = 259
    """256 bytes + BOS, EOS, PAD"""


@dataclass(frozen=True)
class TinyTrainConfig:
    """How a tiny model is trained (config.yaml: ``<paper>.<scale>.tiny``)."""

    model: TinyConfig = field(default_factory=TinyConfig)
    steps: int = 300
    """optimiser steps"""
    batch_size: int = 16
    """windows per step"""
    lr: float = 3e-3
    """AdamW peak learning rate (cosine decay to lr/10 after warmup)"""
    warmup: int = 20
    """linear warmup steps"""
    weight_decay: float = 0.01
    grad_clip: float = 1.0


class ByteTokenizer:
    """UTF-8 bytes as tokens 0..255, plus BOS 256, EOS 257, PAD 258."""

    eos_ids = frozenset({EOS})
    eos_id = EOS
    pad_id = PAD
    bos_id = BOS

    def encode(self, text: str, *, prompt: bool) -> list[int]:
        ids = list(text.encode("utf-8"))
        return [BOS, *ids] if prompt else ids

    def decode(self, ids) -> str:
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")

    def render_chat(self, messages: list[dict]) -> str:
        turns = [f"<|{m['role']}|>\n{m['content']}\n" for m in messages]
        return "".join(turns) + "<|assistant|>\n"

    def chat_tokens(self, messages: list[dict]) -> tuple[list[int], list[bool]]:
        """A whole conversation as tokens (BOS, then each turn; an assistant turn ends with EOS) and,
        per token, whether it is part of an assistant reply (its text and its EOS)."""
        ids, mask = [BOS], [False]
        for m in messages:
            head = self.encode(f"<|{m['role']}|>\n", prompt=False)
            body = self.encode(m["content"], prompt=False) + ([EOS] if m["role"] == "assistant" else [])
            tail = self.encode("\n", prompt=False)
            ids += head + body + tail
            mask += [False] * len(head) + [m["role"] == "assistant"] * len(body) + [False] * len(tail)
        return ids, mask


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        if cfg.d_model % cfg.n_head:
            raise ValueError(f"d_model {cfg.d_model} is not divisible by n_head {cfg.n_head}")
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.dropout = cfg.dropout

    def forward(self, x: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed[:, None],
                                           dropout_p=self.dropout if self.training else 0.0)  # (B, nh, T, hs)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.fc = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.out = nn.Linear(4 * cfg.d_model, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), allowed)
        return x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)))))


class TinyGPT(nn.Module):
    """GPT-2-shaped decoder; ``forward(ids, mask, pos) -> (logits (B, T, V), hidden states)``."""

    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)

    def init_weights(self, generator: torch.Generator) -> None:
        """GPT-2 initialisation (N(0, 0.02); residual projections scaled by 1/sqrt(2 n_layer)), from ``generator``."""
        for name, p in self.named_parameters():
            if p.dim() < 2:
                nn.init.zeros_(p) if name.endswith("bias") else nn.init.ones_(p)
            else:
                std = 0.02 / math.sqrt(2 * self.cfg.n_layer) if name.endswith(("proj.weight", "out.weight")) else 0.02
                with torch.no_grad():
                    p.copy_(torch.randn(p.shape, generator=generator) * std)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        T = ids.shape[1]
        # with a (B, T, T) mask a row packs several sequences: their positions, not the row, must fit
        longest = int(pos.max()) + 1 if mask.dim() == 3 else T
        if longest > self.cfg.context:
            raise ValueError(f"sequence of {longest} tokens exceeds the tiny model's context of {self.cfg.context}")
        causal = torch.ones(T, T, dtype=torch.bool, device=ids.device).tril()  # (T, T)
        eye = torch.eye(T, dtype=torch.bool, device=ids.device)
        if mask.dim() == 3:  # a (B, T, T) visibility mask (TorchLM's Core protocol)
            allowed = causal & (mask.bool() | eye)
        else:
            allowed = causal & (mask.bool()[:, None, :] | eye)  # (B, T, T): key j visible to query i
        x = self.wte(ids) + self.wpe(pos.clamp(max=self.cfg.context - 1))  # (B, T, d)
        hidden = [x]
        for block in self.blocks:
            x = block(x, allowed)
            hidden.append(x)
        x = self.ln_f(x)
        hidden[-1] = x
        return x @ self.wte.weight.T, hidden  # tied output head; (B, T, V)


class TinyCore:
    """:class:`repro.llm.torchlm.Core` over :class:`TinyGPT` (no key/value cache: decoding recomputes
    the whole window, cheap at this size)."""

    def __init__(self, model: TinyGPT) -> None:
        self.model = model.eval()
        self.n_layers = model.cfg.n_layer
        self.max_length = model.cfg.context

    def forward(self, ids, mask, pos, *, hidden=False):
        logits, hs = self.model(ids, mask, pos)
        return logits, (tuple(hs) if hidden else None)

    def step(self, ids, mask, pos, state):
        if state is not None:
            ids, pos = torch.cat([state[0], ids], 1), torch.cat([state[1], pos], 1)
        logits, _ = self.model(ids, mask, pos)
        return logits[:, -1, :], (ids, pos)

    def select(self, state, rows):
        return state[0][rows], state[1][rows]


def tiny_lm(model: TinyGPT, name: str = "tiny") -> TorchLM:
    return TorchLM(name, TinyCore(model), ByteTokenizer())


def _lr_at(step: int, cfg: TinyTrainConfig) -> float:
    """Linear warmup, then cosine decay to lr/10 (nanoGPT's ``get_lr``)."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    frac = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr / 10 + 0.5 * (1 + math.cos(math.pi * frac)) * (cfg.lr - cfg.lr / 10)


def train_tiny(corpus: Sequence[str], cfg: TinyTrainConfig, seed: int, *, name: str = "tiny",
               device: str = "cpu") -> tuple[TorchLM, list[float]]:
    """Train a tiny model from scratch on ``corpus`` (a list of documents).

    Returns
    -------
    The model (a :class:`TorchLM`) and the training loss (nats per byte) at every step.
    """
    if not corpus:
        raise ValueError("train_tiny: the corpus is empty")
    tok = ByteTokenizer()
    docs = [tok.encode(doc, prompt=True) + [EOS] for doc in corpus]
    window = cfg.model.context + 1
    gen = torch_generator(seed)

    def packed() -> torch.Tensor:  # documents drawn at random until the window is full; (context + 1,)
        seq: list[int] = []
        while len(seq) < window:
            seq += docs[int(torch.randint(len(docs), (1,), generator=gen))]
        return torch.tensor(seq[:window])

    model = TinyGPT(cfg.model)
    model.init_weights(gen)
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.95))
    pos = torch.arange(cfg.model.context, device=device).expand(cfg.batch_size, -1)
    mask = torch.ones_like(pos)
    losses = []
    for step in progress(range(cfg.steps), desc=f"train {name}", unit="step"):
        batch = torch.stack([packed() for _ in range(cfg.batch_size)]).to(device)  # (B, context + 1)
        for group in opt.param_groups:
            group["lr"] = _lr_at(step, cfg)
        logits, _ = model(batch[:, :-1], mask, pos)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        losses.append(loss.item())
    log.info("trained %s: %d steps, loss %.3f -> %.3f", name, cfg.steps, losses[0], np.mean(losses[-10:]))
    return tiny_lm(model.eval(), name), losses


def save_tiny(lm: TorchLM, out_dir: str | os.PathLike) -> Path:
    """Write a tiny model as ``model.safetensors`` + ``config.json`` (``"model_type": "repro-tiny"``)."""
    from safetensors.torch import save_model

    model = lm.module
    if not isinstance(model, TinyGPT):
        raise ValueError(f"save_tiny writes tiny models; {lm.name} is {type(model).__name__}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(out_dir / "model.safetensors") as tmp:
        save_model(model, str(tmp), metadata={"format": "pt"})
    with atomic_open(out_dir / "config.json", "w", encoding="utf-8") as fh:
        json.dump({"model_type": "repro-tiny", **asdict(model.cfg)}, fh, indent=2, sort_keys=True)
    return out_dir


def load_tiny(path: str | os.PathLike, *, name: str | None = None, device: str = "cpu") -> TorchLM:
    """A tiny model written by :func:`save_tiny`."""
    from safetensors.torch import load_model

    path = Path(path)
    try:
        cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path} holds no tiny model (no config.json)") from None
    if cfg.pop("model_type", None) != "repro-tiny":
        raise ValueError(f"{path}/config.json is not a tiny model's (model_type != 'repro-tiny')")
    model = TinyGPT(TinyConfig(**cfg))
    load_model(model, str(path / "model.safetensors"), device=device)
    return tiny_lm(model.to(device).eval(), name or str(path))
