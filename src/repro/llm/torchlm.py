"""The local backend: generation, scoring and hidden states, written once for every torch model.

:class:`TorchLM` runs any causal LM that runs in this process: a Hugging Face model
(:class:`repro.llm.hf.HFCore`, e.g. the shipped SmolLM2) or a tiny transformer trained here
(:class:`repro.llm.tiny.TinyCore`). A *core* owns the network and answers two calls:

- ``forward(ids, mask, pos, hidden=False) -> (logits (B, T, V), hidden states or None)``, a full
  pass used for scoring, hidden states and training; ``mask`` is the (B, T) padding mask, or a
  boolean (B, T, T) one (query i may see key j; causal, each query seeing itself), e.g. several
  continuations packed after one shared prompt;
- ``step(ids, mask, pos, state) -> (logits of the last position (B, V), state)``, one decoding
  step; ``state`` is whatever the core keeps between steps (a key/value cache for Hugging Face).

A *tokenizer adapter* maps text to ids and back and renders chats with the model's template.

Choices
-------
- Decoding is our own loop, not ``transformers.generate``: sampling must draw from generators that
  the caller seeds (``generate`` uses torch's global RNG), and each prompt draws from its own stream
  ``job_seed(seed, "llm-sample", i)``, so a prompt's sample does not depend on the batch it is in.
- Generation pads on the left (so every row's next token sits at the last column) and passes
  position ids that skip the padding; scoring and hidden states pad on the right, where a causal
  model cannot see the padding at all.
- Prompts are sorted by length within a call (less padding) and the outputs put back in order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import torch

from repro.llm.base import TokenizedLM, as_prompt_list, cut_at_stop
from repro.logs import progress
from repro.seeding import job_seed, torch_generator

__all__ = ["TorchLM", "Core", "TokenizerAdapter", "sample_next"]

log = logging.getLogger(__name__)


class TokenizerAdapter(Protocol):
    """What :class:`TorchLM` needs from a tokenizer."""

    eos_ids: frozenset[int]
    pad_id: int
    bos_id: int | None

    def encode(self, text: str, *, prompt: bool) -> list[int]:
        """Token ids of ``text``; ``prompt=True`` adds the tokens a sequence starts with (BOS), if any."""

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``, special tokens dropped."""

    def render_chat(self, messages: list[dict]) -> str:
        """The prompt text for ``messages`` with the assistant's turn opened."""


class Core(Protocol):
    n_layers: int
    max_length: int | None

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, *,
                hidden: bool = False) -> tuple[torch.Tensor, tuple[torch.Tensor, ...] | None]:
        ...

    def step(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        ...

    def select(self, state: Any, rows: torch.Tensor) -> Any:
        """The decoding state of ``rows`` only (a batch's finished sequences are dropped)."""
        ...


def sample_next(logits: torch.Tensor, *, temperature: float, top_p: float,
                generators: Sequence[torch.Generator] | None) -> torch.Tensor:
    """Next token per row of ``logits`` (B, V): argmax at temperature 0, else a nucleus sample.

    Top-p (Holtzman et al., ICLR 2020, "The Curious Case of Neural Text Degeneration", §3.1):
    keep the most probable tokens until their mass reaches ``top_p`` (the token that crosses it is
    kept), renormalise, draw. Row ``b`` draws with ``generators[b]``.
    """
    if temperature == 0.0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits.float() / temperature, dim=-1)  # (B, V)
    if top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        before = sorted_p.cumsum(dim=-1) - sorted_p  # mass of the tokens ranked above each one
        sorted_p = sorted_p.masked_fill(before >= top_p, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
    out = torch.empty(probs.shape[0], dtype=torch.long)
    for b in range(probs.shape[0]):
        out[b] = torch.multinomial(probs[b], 1, generator=generators[b])[0]
    return out


class TorchLM(TokenizedLM):
    """A causal LM that runs in this process (see the module docstring).

    Parameters
    ----------
    name : what it was loaded from (registry name or path).
    core : the network (:class:`Core`).
    tokenizer : the tokenizer adapter (:class:`TokenizerAdapter`).
    device : torch device of the core's parameters.
    """

    def __init__(self, name: str, core: Core, tokenizer: TokenizerAdapter, *, device: str = "cpu") -> None:
        self.name = name
        self.core = core
        self.tokenizer = tokenizer
        self.device = torch.device(device)
        self._loaded()

    def describe(self) -> dict:
        dtype = next(self.core.model.parameters()).dtype
        return {"backend": "torch", "model": self.name, "dtype": str(dtype).removeprefix("torch."),
                "threads": torch.get_num_threads(), "device": str(self.device)}

    # -- what papers may reach through ------------------------------------------------------
    @property
    def module(self) -> torch.nn.Module:
        """The underlying ``nn.Module`` (for LoRA, Hessians, probes)."""
        return self.core.model

    @property
    def n_layers(self) -> int:
        return self.core.n_layers

    # -- generation ---------------------------------------------------------------------------
    def _generate_ids(self, prompt_ids: list[list[int]], *, max_new_tokens: int = 64, temperature: float = 0.0,
                      top_p: float = 1.0, seed: int = 0, stop: Sequence[str] = (), batch_size: int = 8) -> list[str]:
        stop = self._generation_request(prompt_ids, max_new_tokens, temperature, top_p, batch_size, stop)
        order = sorted(range(len(prompt_ids)), key=lambda i: len(prompt_ids[i]))
        out: list[str] = [""] * len(prompt_ids)
        batches = [order[k:k + batch_size] for k in range(0, len(order), batch_size)]
        if len(batches) > 1:
            batches = progress(batches, desc=f"generate {self.name}", unit="batch")
        for idx in batches:
            gens = None if temperature == 0 else [torch_generator(job_seed(seed, "llm-sample", i)) for i in idx]
            texts = self._generate_batch([prompt_ids[i] for i in idx], max_new_tokens, temperature, top_p, gens, stop)
            for i, text in zip(idx, texts):
                out[i] = text
        return out

    @torch.inference_mode()
    def _generate_batch(self, prompt_ids, max_new_tokens, temperature, top_p, gens, stop) -> list[str]:
        tok = self.tokenizer
        n = len(prompt_ids)
        width = max(len(p) for p in prompt_ids)
        limit = self.core.max_length
        if limit is not None and width + max_new_tokens > limit:
            raise ValueError(f"generate: prompt of {width} tokens + max_new_tokens {max_new_tokens} exceeds "
                             f"{self.name}'s context of {limit} tokens")
        ids = torch.full((n, width), tok.pad_id, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        for b, p in enumerate(prompt_ids):  # left padding
            ids[b, width - len(p):] = torch.tensor(p)
            mask[b, width - len(p):] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        ids, mask, pos = ids.to(self.device), mask.to(self.device), pos.to(self.device)
        new: list[list[int]] = [[] for _ in range(n)]
        done = [False] * n
        texts = [""] * n
        if max_new_tokens == 0:
            return texts
        rows = list(range(n))  # the prompts still decoding; row r of the tensors is prompt rows[r]
        logits, state = self.core.step(ids, mask, pos, None)
        for t in range(max_new_tokens):
            nxt = sample_next(logits.cpu(), temperature=temperature, top_p=top_p,
                              generators=None if gens is None else [gens[b] for b in rows])
            for r, b in enumerate(rows):
                token = int(nxt[r])
                if token in tok.eos_ids:
                    done[b] = True
                    continue
                new[b].append(token)
                if stop:
                    texts[b], done[b] = cut_at_stop(tok.decode(new[b]), stop)
            if all(done) or t == max_new_tokens - 1:
                break
            keep = [r for r, b in enumerate(rows) if not done[b]]
            if len(keep) < len(rows):
                # Finished prompts leave the batch: each step then costs only what is still decoding.
                # Every row attends only to itself, so the others' tokens are unchanged.
                sel = torch.tensor(keep, device=self.device)
                state, mask, pos = self.core.select(state, sel), mask[sel], pos[sel]
                nxt, rows = nxt[keep], [rows[r] for r in keep]
            mask = torch.cat([mask, torch.ones((len(rows), 1), dtype=mask.dtype, device=self.device)], dim=1)
            pos = pos[:, -1:] + 1
            logits, state = self.core.step(nxt[:, None].to(self.device), mask, pos, state)
        return [cut_at_stop(tok.decode(ids_b), stop)[0] for ids_b in new]

    # -- scoring ------------------------------------------------------------------------------
    def _right_padded(self, seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        width = max(len(s) for s in seqs)
        if self.core.max_length is not None and width > self.core.max_length:
            raise ValueError(f"{self.name}: a sequence of {width} tokens exceeds the context of {self.core.max_length}")
        ids = torch.full((len(seqs), width), self.tokenizer.pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for b, s in enumerate(seqs):
            ids[b, :len(s)] = torch.tensor(s)
            mask[b, :len(s)] = 1
        pos = torch.arange(width).expand(len(seqs), width)
        return ids.to(self.device), mask.to(self.device), pos.to(self.device)

    def score_tokens(self, contexts: list[list[int]], targets: list[list[int]], *, batch_size: int = 8) -> list[np.ndarray]:
        """Log-probabilities of each token of ``targets[i]`` after ``contexts[i]`` (token ids)."""
        out: list[np.ndarray] = [np.empty(0)] * len(contexts)
        order = sorted(range(len(contexts)), key=lambda i: len(contexts[i]) + len(targets[i]))
        with torch.inference_mode():
            for k in range(0, len(order), batch_size):
                idx = order[k:k + batch_size]
                ids, mask, pos = self._right_padded([contexts[i] + targets[i] for i in idx])
                logits, _ = self.core.forward(ids, mask, pos)
                for row, i in enumerate(idx):
                    c, n = len(contexts[i]), len(targets[i])
                    # logits at position j predict token j + 1
                    lp = torch.log_softmax(logits[row, c - 1:c - 1 + n].float(), dim=-1)  # (n, V)
                    tgt = torch.tensor(targets[i], device=lp.device)
                    out[i] = lp.gather(-1, tgt[:, None])[:, 0].cpu().numpy().astype(np.float64)
        return out

    def candidate_logprobs(self, prompts, candidates, *, grad: bool = False, batch_size: int = 8):
        """log p(candidate | prompt) in nats, summed over the candidate's tokens, for every prompt's row
        of candidates: a (P, C) float64 tensor, differentiable with ``grad`` (through any adapter).

        Each prompt is one packed row, its tokens once and then every candidate's, each candidate
        seeing the prompt and its own earlier tokens at the positions it would have after the prompt
        alone (a (B, T, T) mask through :meth:`Core.forward`): the values of :meth:`logprobs` on each
        (prompt, candidate) pair, to float rounding, at 1 / C of the prompt's cost. ``batch_size``
        prompts go through the model at a time.
        """
        prompts = as_prompt_list(prompts)
        if len(candidates) != len(prompts) or len({len(row) for row in candidates}) != 1 or not len(candidates[0]):
            raise ValueError("candidate_logprobs: one row of candidates per prompt, every row of the same (non-zero) length")
        step = max(1, int(batch_size))
        return torch.cat([self._packed_logprobs(prompts[i:i + step], candidates[i:i + step], grad)
                          for i in range(0, len(prompts), step)])

    def _packed_rows(self, prompts, candidates):
        """Token ids, (B, T, T) visibility, positions of the packed rows; and per scored token its (row, column
        whose logits predict it, token id, candidate index over the batch's P x C)."""
        tok = self.tokenizer
        rows, where = [], []
        for p, (prompt, cands) in enumerate(zip(prompts, candidates)):
            ids = self._prompt_ids(prompt, p, "candidate_logprobs")
            c = len(ids)
            pos, block = list(range(c)), [-1] * c
            for k, cand in enumerate(cands):
                t = tok.encode(cand, prompt=False)
                if not t:
                    raise ValueError(f"candidate_logprobs: candidate {cand!r} encodes to no tokens")
                start = len(ids)
                # token m of the candidate is predicted at the prompt's last column (m = 0), else at its own m - 1
                where += [(p, c - 1 if m == 0 else start + m - 1, t[m], p * len(cands) + k) for m in range(len(t))]
                ids, pos, block = ids + t, pos + list(range(c, c + len(t))), block + [k] * len(t)
            rows.append((ids, pos, block))
        width = max(len(r[0]) for r in rows)
        if self.core.max_length is not None and max(max(r[1]) + 1 for r in rows) > self.core.max_length:
            raise ValueError(f"{self.name}: a prompt and candidate exceed the context of {self.core.max_length}")
        ids = torch.full((len(rows), width), tok.pad_id, dtype=torch.long)
        pos = torch.zeros_like(ids)
        block = torch.full_like(ids, -2)                                           # -2 padding, -1 prompt, k candidate k
        for b, (r_ids, r_pos, r_block) in enumerate(rows):
            n = len(r_ids)
            ids[b, :n], pos[b, :n], block[b, :n] = torch.tensor(r_ids), torch.tensor(r_pos), torch.tensor(r_block)
        causal = torch.ones(width, width, dtype=torch.bool).tril()
        key, query = block[:, None, :], block[:, :, None]
        visible = causal & (((key == -1) & (query != -2)) | ((key == query) & (key >= 0)))
        visible |= torch.eye(width, dtype=torch.bool)                              # padding sees itself only
        return ids, visible, pos, torch.tensor(where, dtype=torch.long)

    def _packed_logprobs(self, prompts, candidates, grad: bool):
        ids, visible, pos, where = self._packed_rows(prompts, candidates)
        dev = self.device
        with torch.set_grad_enabled(grad):
            logits, _ = self.core.forward(ids.to(dev), visible.to(dev), pos.to(dev))
            lp = torch.log_softmax(logits[where[:, 0].to(dev), where[:, 1].to(dev)].float(), -1)   # (N, V)
            tok_lp = lp.gather(-1, where[:, 2:3].to(dev))[:, 0].double().cpu()
            seq = torch.zeros(len(prompts) * len(candidates[0]), dtype=torch.float64).index_add(0, where[:, 3], tok_lp)
        return seq.reshape(len(prompts), -1)

    # -- hidden states -----------------------------------------------------------------------
    def hidden_states(self, prompts, layers, positions=-1, *, batch_size=8):
        prompts = as_prompt_list(prompts)
        n_states = self.core.n_layers + 1
        layer_idx = [int(layer) for layer in layers]
        bad = [layer for layer in layer_idx if not -n_states <= layer < n_states]
        if bad or not layer_idx:
            raise ValueError(f"hidden_states: layers {bad or layer_idx} out of range; {self.name} has layers 0 (embeddings) "
                             f"to {self.core.n_layers}")
        layer_idx = [layer % n_states for layer in layer_idx]
        seqs = [self.tokenizer.encode(p, prompt=True) for p in prompts]
        picked: list[np.ndarray] = []
        with torch.inference_mode():
            for k in range(0, len(seqs), batch_size):
                chunk = seqs[k:k + batch_size]
                ids, mask, pos = self._right_padded(chunk)
                _, hs = self.core.forward(ids, mask, pos, hidden=True)
                stack = torch.stack([hs[layer] for layer in layer_idx], dim=1).float()  # (B, L, T, d)
                for b, s in enumerate(chunk):
                    where = _positions(positions, len(s), k + b)
                    picked.append(stack[b][:, where].cpu().numpy())  # (L, P, d)
        if isinstance(positions, slice):
            return picked
        out = np.stack(picked)  # (N, L, P, d)
        return out[:, :, 0] if isinstance(positions, (int, np.integer)) else out


def _positions(positions: int | Sequence[int] | slice, length: int, which: int) -> list[int]:
    """Token indices of one prompt of ``length`` tokens; negative positions count from its end."""
    if isinstance(positions, slice):
        where = list(range(length))[positions]
        if not where:
            raise ValueError(f"hidden_states: span {positions} is empty for prompt {which} ({length} tokens)")
        return where
    items = [positions] if isinstance(positions, (int, np.integer)) else list(positions)
    out = []
    for p in items:
        p = int(p)
        if not -length <= p < length:
            raise ValueError(f"hidden_states: position {p} is outside prompt {which} ({length} tokens)")
        out.append(p % length)
    return out

