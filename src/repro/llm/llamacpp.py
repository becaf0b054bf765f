"""The llama.cpp backend: a GGUF file run by ``llama-cpp-python`` in this process, behind :class:`LanguageModel`.

    m = repro.llm.load("smollm2-135m", backend="llamacpp")        # or a .gguf path; config: backend: llamacpp
    m.generate(prompts, max_new_tokens=32, stop=["\\n"])            # same arguments as the torch backend
    m.logprobs(prompts, continuations)                              # log p(continuation | prompt), nats
    m.add_lora("out/lora/step-000020")                              # a peft adapter trained on the torch backend

The weights stay as quantised in the file (SmolLM2-135M: Q4_1) and llama.cpp's CPU kernels multiply
them with activations quantised to 8 bits, so the numbers differ from the torch backend's (which
dequantises the same file to float32) in the last digits, and now and then a greedy token flips
(measured agreement: ``tests/llm/test_llamacpp.py`` and ``docs/stages/llm.md``). What it buys is speed.

Choices
-------
- :class:`llama_cpp.Llama` loads the file (weights, vocabulary, metadata, chat template); decoding runs
  in a context of our own with one KV-cache stream per sequence (``n_seq_max`` sequences,
  ``kv_unified`` off), fed through the low-level batch API (``llama_batch`` + ``llama_decode``). A
  batch of prompts decodes together, one token per sequence per step, and each sequence attends to
  its own stream only, so a prompt's output does not depend on the batch it is in (with a unified
  cache it does: the attention sums run over other sequences' masked cells too).
- The context grows on demand (more sequences, longer ones) up to ``n_ctx`` KV cells in all
  (default: the model's training context); a batch whose sequences would not fit is decoded in
  smaller groups, so ``batch_size`` is an upper bound.
- Prompt reuse (``reuse_prompts=True``; off by default): each sequence's stream keeps the KV cells of its
  last generation (prompt and the tokens fed back), and the next generation in that stream (the ``i``-th
  prompt of a group is the ``i``-th stream) removes the cells after the longest common prefix with its new
  prompt and feeds only the rest, as llama.cpp's server does with its prompt cache. A conversation
  continued turn by turn (history, reply, next message) then pays for each message once instead of
  re-reading the whole history every turn; the context grows by doubling so that it is not rebuilt (and
  emptied) at every turn. The cost: a token's keys and values come out of llama.cpp's kernels with
  different last bits when computed in a different batch shape (one token per decoding step, or a prefix
  fed apart from its suffix), so a reply equals the empty-cache reply only up to rounding (a sampled token
  can flip), and a prompt's output depends on what its stream held before. It stays deterministic: the
  same sequence of calls gives the same outputs. Off, every call starts from empty streams and a prompt's
  output does not depend on its batch. Scoring reuses the same way (a stream that holds the context feeds only
  the continuation, from the context's last token, whose logits score the first continuation token), so scoring
  two answers after a generated reasoning reads the reasoning once. An adapter and a rebuilt context empty the
  streams.
- Shared prefixes (``share_prefixes``, on by default): within one batch (a group of generations, or of scored
  pairs), a prefix that several sequences share (the chat template's system turn, one prompt scored against
  several continuations) is fed once, into one stream, and its KV cells are copied to the other streams
  (``llama_memory_seq_cp``: across streams llama.cpp copies the whole stream's buffer before the next decode);
  then each sequence feeds only its own rest. The prefixes form a tree, fed a level per ``llama_decode`` call
  (:func:`_shared_prefix_plan`); a sequence's shared part stops before its last prompt token, whose logits are
  read in the last feed with the rest. Every token is computed at its own position against the same cells as
  when each prompt is fed whole, and llama.cpp's kernels give the same bits for it (in the tests: identical
  log-probabilities and replies, alone or in any batch, with and without an adapter), so it is on by default;
  unlike prompt reuse, nothing is computed one token per step. Streams that hold cells from an earlier call
  (prompt reuse) take no part. ``share_prefixes=False`` feeds every prompt whole.
- Sampling is ours, not llama.cpp's: the same temperature / top-p rule as
  :func:`repro.llm.torchlm.sample_next`, drawn with numpy from prompt ``i``'s own stream
  ``job_seed(seed, "llm-sample", i)``. Greedy is the argmax of the logits.
- Tokenisation as the torch backend's: special tokens written in the text are parsed, ``prompt=True``
  adds what the vocabulary says a sequence starts with (nothing for SmolLM2), decoding drops special
  tokens. Generation ends at the vocabulary's end-of-sequence token (as the torch backend; llama.cpp's
  wider end-of-generation set is not used). ``chat`` renders the GGUF file's own chat template
  (the Jinja2 environment that transformers uses).
- ``logprobs`` follows :meth:`repro.llm.torchlm.TorchLM.logprobs`: prompt and continuation are tokenised
  separately, an empty prompt conditions on BOS alone; log-softmax in float64 of llama.cpp's float32
  logits.
- Threads: ``n_threads`` or the job's (``OMP_NUM_THREADS``, which :meth:`repro.jobs.Job.limit_threads`
  sets), else 1. llama.cpp's own log goes to the ``repro.llm.llamacpp.native`` logger (its chatter at
  DEBUG), never to stdout.
- Hidden states, gradients and training need the torch backend and raise :class:`UnsupportedOperation`.
- LoRA: an adapter trained on the torch backend (:mod:`repro.llm.lora`, peft) runs here with
  ``m.add_lora(checkpoint_folder)``: :func:`export_lora_gguf` writes it as a llama.cpp GGUF adapter with
  the ``gguf`` package (llama-architecture models), and llama.cpp applies it to the quantised weights.

Importing this module does not import torch (nor ``llama_cpp``, until a model is loaded).
"""

from __future__ import annotations

import collections
import ctypes
import json
import logging
import os
import struct
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from repro.llm.base import TokenizedLM, UnsupportedOperation, cut_at_stop
from repro.logs import progress
from repro.seeding import job_seed, make_rng

__all__ = ["LlamaCppLM", "LlamaCppTokenizer", "load_llamacpp", "default_threads", "export_lora_gguf"]

log = logging.getLogger(__name__)
native_log = logging.getLogger(__name__ + ".native")

#: KV-cache cells are allocated per sequence in multiples of this.
_CELLS = 256
#: The seed handed to ``llama_cpp.Llama`` (its own sampler is unused here; 0 would mean "random" to it).
_LLAMA_SEED = 1


def default_threads() -> int:
    """The job's thread count (``OMP_NUM_THREADS``, set by :meth:`repro.jobs.Job.limit_threads`), else 1."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "1")))
    except ValueError:
        return 1


# -- llama.cpp's log, routed to the logging module --------------------------------------------------
class _NativeLog:
    """Receives llama.cpp's log lines (``llama_log_set``), forwards them to :data:`native_log`, keeps the
    last warnings and errors for error messages. Installed once per process."""

    # ggml_log_level: 0 none, 1 debug, 2 info, 3 warn, 4 error, 5 continuation of the previous line.
    # llama.cpp's info is a few thousand lines per model load: DEBUG here.
    LEVELS = {0: logging.DEBUG, 1: logging.DEBUG, 2: logging.DEBUG, 3: logging.WARNING, 4: logging.ERROR}

    def __init__(self) -> None:
        self.callback = None
        self.partial = ""
        self.level = logging.DEBUG
        self.problems: collections.deque[str] = collections.deque(maxlen=8)

    def install(self) -> None:
        if self.callback is not None:
            return
        import llama_cpp

        @llama_cpp.llama_log_callback
        def callback(level: int, text: bytes, user_data) -> None:
            try:
                self.receive(level, text.decode("utf-8", errors="replace") if text else "")
            except Exception:  # an exception must not cross into C
                pass

        self.callback = callback  # a reference, or the C side calls freed memory
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))

    def receive(self, level: int, text: str) -> None:
        if level != 5:
            self.level = self.LEVELS.get(level, logging.DEBUG)
        self.partial += text
        while "\n" in self.partial:
            line, self.partial = self.partial.split("\n", 1)
            if line.strip():
                if self.level >= logging.WARNING:
                    self.problems.append(line.strip())
                native_log.log(self.level, "%s", line)

    def recent_problems(self) -> str:
        return "; ".join(self.problems)


_NATIVE = _NativeLog()


def _sample(logits: np.ndarray, temperature: float, top_p: float, rng: np.random.Generator | None) -> int:
    """Next token from one row of logits: argmax at temperature 0, else a nucleus sample drawn with ``rng``
    (the rule of :func:`repro.llm.torchlm.sample_next`: keep the most probable tokens until their mass
    reaches ``top_p``, the token that crosses it included; renormalise; draw)."""
    if temperature == 0.0 or rng is None:
        return int(np.argmax(logits))
    z = logits.astype(np.float64) / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    if top_p < 1.0:
        order = np.argsort(-p, kind="stable")
        sp = p[order]
        before = np.cumsum(sp) - sp  # mass of the tokens ranked above each one
        keep = order[before < top_p]
        q = p[keep] / p[keep].sum()
        return int(keep[min(int(np.searchsorted(np.cumsum(q), rng.random(), side="right")), len(keep) - 1)])
    return int(min(int(np.searchsorted(np.cumsum(p), rng.random(), side="right")), len(p) - 1))


def _log_softmax_at(rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """log_softmax(rows)[i, targets[i]] in float64, a block of rows at a time (rows: (n, V) float32)."""
    out = np.empty(len(rows), dtype=np.float64)
    for k in range(0, len(rows), 64):
        block = rows[k:k + 64].astype(np.float64)
        top = block.max(axis=1, keepdims=True)
        lse = top[:, 0] + np.log(np.exp(block - top).sum(axis=1))
        out[k:k + 64] = block[np.arange(len(block)), targets[k:k + 64]] - lse
    return out



def _common(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    """Length of the common prefix of ``a`` and ``b``, at most ``limit``."""
    k, limit = 0, min(limit, len(a), len(b))
    while k < limit and a[k] == b[k]:
        k += 1
    return k


def _shared_prefix_plan(seqs: Sequence[Sequence[int]], caps: Sequence[int]):
    """How to feed prefixes that several sequences share once each (module docstring: shared prefixes).

    ``caps[s]``: how many leading tokens of ``seqs[s]`` may come from a shared prefix (0: none). Returns
    ``(rounds, reach)``: ``reach[s]`` is how many leading tokens of ``seqs[s]`` its stream holds after the
    rounds (the longest prefix, within the caps, that it shares with another sequence; 0 when none); each
    round is ``(copies, feeds)``: the streams to copy first, ``(source, destination)`` (the source holds
    exactly the prefix the destination needs), then the spans to feed in one batch, ``(stream, start, stop)``
    (tokens ``start:stop`` of that stream's sequence). The rounds walk the tree of shared prefixes from the
    root, one level a round: every edge of the tree is fed once, by one stream below it.
    """
    n = len(seqs)
    caps = [min(int(c), len(q)) for c, q in zip(caps, seqs)]
    reach = [0] * n
    # the longest prefix a sequence shares with any other is shared with a neighbour in sorted order
    order = sorted(range(n), key=lambda s: list(seqs[s][:caps[s]]))
    for a, b in zip(order, order[1:]):
        k = _common(seqs[a], seqs[b], min(caps[a], caps[b]))
        reach[a], reach[b] = max(reach[a], k), max(reach[b], k)
    rounds = []
    nodes = [([s for s in range(n) if reach[s] > 0], 0, None)]  # (sequences below, depth, stream holding it)
    while nodes:
        copies, feeds, below = [], [], []
        for members, depth, holder in nodes:
            branches: dict[int, list[int]] = {}
            for s in members:
                if reach[s] == depth:       # its shared part ends here
                    if s != holder:
                        copies.append((holder, s))
                else:
                    branches.setdefault(seqs[s][depth], []).append(s)
            for part in branches.values():  # >= 2 sequences each: a sequence's reach is shared with another
                end, stop = min(reach[s] for s in part), depth + 1
                while stop < end and all(seqs[s][stop] == seqs[part[0]][stop] for s in part):
                    stop += 1
                feeder = holder if holder in part else part[0]
                if holder is not None and feeder != holder:
                    copies.append((holder, feeder))
                feeds.append((feeder, depth, stop))
                below.append((part, stop, feeder))
        rounds.append((copies, feeds))
        nodes = below
    return rounds, reach


class LlamaCppTokenizer:
    """Text to token ids and back with llama.cpp's vocabulary, as :class:`repro.llm.torchlm.TokenizerAdapter`."""

    def __init__(self, llama: Any, name: str) -> None:
        import llama_cpp

        self._llama_cpp = llama_cpp
        self.llama = llama
        self.name = name
        self.vocab = llama._model.vocab
        eos = llama_cpp.llama_vocab_eos(self.vocab)
        if eos < 0:
            raise ValueError(f"{name}: the vocabulary has no end-of-sequence token")
        bos = llama_cpp.llama_vocab_bos(self.vocab)
        self.eos_id = int(eos)
        self.eos_ids = frozenset({self.eos_id})
        self.bos_id = int(bos) if bos >= 0 else None
        self.pad_id = self.eos_id
        self.add_bos = bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))
        self._template = None

    def encode(self, text: str, *, prompt: bool) -> list[int]:
        if not text:
            return [self.bos_id] if prompt and self.add_bos and self.bos_id is not None else []
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=prompt, special=True))

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``, special tokens dropped; bytes of an unfinished UTF-8 character become U+FFFD."""
        ids = [int(i) for i in ids]
        if not ids:
            return ""
        lc = self._llama_cpp
        tokens = (lc.llama_token * len(ids))(*ids)
        size = 8 * len(ids) + 16
        for _ in range(2):
            buf = ctypes.create_string_buffer(size)
            n = lc.llama_detokenize(self.vocab, tokens, len(ids), buf, size, False, False)
            if n >= 0:
                return buf.raw[:n].decode("utf-8", errors="replace")
            size = -n + 16
        raise RuntimeError(f"{self.name}: llama_detokenize failed for {len(ids)} tokens")

    def render_chat(self, messages: list[dict]) -> str:
        if self._template is None:
            template = self.llama.metadata.get("tokenizer.chat_template")
            if not template:
                raise UnsupportedOperation(f"{self.name}: the GGUF file has no chat template; use generate()")
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            model = self.llama._model
            text = (lambda i: model.token_get_text(i) if i is not None and i >= 0 else "")
            self._template = Jinja2ChatFormatter(template=template, eos_token=text(self.eos_id),
                                                 bos_token=text(self.bos_id), add_generation_prompt=True)
        return self._template(messages=messages).prompt

class LlamaCppLM(TokenizedLM):
    """A GGUF model run by llama.cpp (see the module docstring).

    Parameters
    ----------
    path : the ``.gguf`` file.
    name : registry name or path, for logs and provenance (default: the path).
    n_threads : CPU threads (default :func:`default_threads`: the job's, else 1).
    n_ctx : KV-cache cells shared by the sequences decoded together (default: the model's training
        context); one sequence (prompt + new tokens) may use them all.
    n_batch : tokens per ``llama_decode`` call (prompts are fed in chunks of this).
    reuse_prompts : keep each stream's cells between generations and feed only what follows the common
        prefix (module docstring: faster for conversations, equal to an empty cache only up to rounding).
    share_prefixes : within one batch, feed a prefix common to several prompts once and copy its cells to
        the other streams (module docstring: the same numbers, bit for bit as measured, for less work).
    """

    def __init__(self, path: str | os.PathLike, *, name: str | None = None, n_threads: int | None = None,
                 n_ctx: int | None = None, n_batch: int = 512, reuse_prompts: bool = False,
                 share_prefixes: bool = True) -> None:
        path = Path(path)
        self.path = path
        self.name = name or str(path)
        if not path.is_file():
            raise ValueError(f"GGUF file {path} does not exist")
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file (it starts with {magic!r}, not b'GGUF')")
        self.n_threads = int(n_threads) if n_threads is not None else default_threads()
        if self.n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        if n_batch < 1:
            raise ValueError(f"n_batch must be >= 1, got {n_batch}")
        self.n_batch = int(n_batch)

        _NATIVE.install()
        import llama_cpp

        self._lc = llama_cpp
        _NATIVE.problems.clear()
        log.info("loading %s from GGUF %s with llama.cpp (%d thread%s)", self.name, path, self.n_threads,
                 "" if self.n_threads == 1 else "s")
        try:
            self.llama = llama_cpp.Llama(str(path), n_ctx=512, n_batch=512, n_threads=self.n_threads,
                                         n_threads_batch=self.n_threads, seed=_LLAMA_SEED, verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            detail = _NATIVE.recent_problems() or str(exc)
            raise ValueError(f"llama.cpp could not load {path}: {detail}") from exc
        self.tokenizer = LlamaCppTokenizer(self.llama, self.name)
        self.n_vocab = int(self.llama.n_vocab())
        self.max_length = int(self.llama._model.n_ctx_train())
        self.n_ctx = int(n_ctx) if n_ctx is not None else self.max_length
        if self.n_ctx < _CELLS:
            raise ValueError(f"n_ctx must be >= {_CELLS}, got {self.n_ctx}")
        self._ctx = None        # the decoding context (llama_cpp._internals.LlamaContext), built on demand
        self._shape = (0, 0)    # its (sequences, cells per sequence)
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self._adapters: list[tuple[Any, float]] = []  # (llama_adapter_lora_p, scale), applied to every context
        self._adapter_names: list[str] = []
        self.reuse_prompts = bool(reuse_prompts)
        self.share_prefixes = bool(share_prefixes)
        self._kept: list[list[int]] = []  # per stream, the tokens whose KV cells it holds (prompt reuse)
        self.tokens_fed = 0  # tokens decoded so far (prompt tokens not reused, and generated ones)
        self._loaded()

    def describe(self) -> dict:
        ftype = self.llama.metadata.get("general.file_type")
        names = {str(getattr(self._lc, n)): n.removeprefix("LLAMA_FTYPE_").removeprefix("MOSTLY_")
                 for n in dir(self._lc) if n.startswith("LLAMA_FTYPE_")}
        return {"backend": "llamacpp", "model": self.name, "file": self.path.name,
                "quantisation": names.get(str(ftype), f"file_type {ftype}"), "threads": self.n_threads,
                "adapters": list(self._adapter_names), "reuse_prompts": self.reuse_prompts,
                "share_prefixes": self.share_prefixes}

    # -- what papers may reach through ------------------------------------------------------
    @property
    def n_layers(self) -> int:
        meta = self.llama.metadata
        return int(meta.get(f"{meta.get('general.architecture', 'llama')}.block_count", 0))

    @property
    def module(self):
        raise UnsupportedOperation(f"{self.name} runs on llama.cpp (backend llamacpp), which has no torch module; "
                                   "LoRA training, Hessians and probes need the torch backend (backend local)")

    def hidden_states(self, prompts, layers, positions=-1, *, batch_size=8):
        raise UnsupportedOperation(f"{self.name} runs on llama.cpp (backend llamacpp), which exposes no hidden "
                                   "states; use the torch backend (repro.llm.load(name), backend local)")

    def candidate_logprobs(self, prompts, candidates, *, grad: bool = False, batch_size: int = 8):
        raise UnsupportedOperation(f"{self.name} runs on llama.cpp (backend llamacpp): candidate_logprobs (packed, "
                                   "differentiable) needs the torch backend; logprobs() scores each pair here")

    def close(self) -> None:
        """Free the context, the batch and the model now (otherwise at garbage collection)."""
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
        if self._batch is not None:
            self._lc.llama_batch_free(self._batch)
            self._batch = None
        for adapter, _ in self._adapters:
            self._lc.llama_adapter_lora_free(adapter)
        self._adapters = []
        if getattr(self, "llama", None) is not None:
            self.llama.close()

    def add_lora(self, adapter: str | os.PathLike, *, scale: float = 1.0) -> LlamaCppLM:
        """Apply a LoRA adapter to every later call (and return ``self``): a llama.cpp LoRA GGUF file, or a
        peft checkpoint folder (``repro.llm.lora``'s ``step-*``), converted with :func:`export_lora_gguf`.

        Adapters add up; llama.cpp scales each by ``scale * alpha / rank``, as peft does by ``alpha / rank``.
        """
        adapter = source = Path(adapter)
        lc = self._lc
        with tempfile.TemporaryDirectory(prefix="repro-lora-") as tmp:
            if adapter.is_dir():
                adapter = export_lora_gguf(adapter, Path(tmp) / "adapter.gguf", base=self.path)
            elif not adapter.is_file():
                raise ValueError(f"LoRA adapter {adapter} does not exist")
            _NATIVE.problems.clear()
            handle = lc.llama_adapter_lora_init(self.llama._model.model, str(adapter).encode("utf-8"))
        if not handle:
            raise ValueError(f"llama.cpp could not load the LoRA adapter {adapter} onto {self.name}: "
                             f"{_NATIVE.recent_problems() or 'no detail'}")
        self._adapters.append((handle, float(scale)))
        self._adapter_names.append(f"{source.name} x{float(scale):g}")
        self._loaded()
        self._forget()  # cells computed without this adapter
        if self._ctx is not None:
            self._apply_adapters(self._ctx)
        log.info("%s: LoRA adapter %s applied (scale %g)", self.name, adapter, scale)
        return self

    def _apply_adapters(self, ctx) -> None:
        lc = self._lc
        adapters = (lc.llama_adapter_lora_p_ctypes * len(self._adapters))(*[a for a, _ in self._adapters])
        scales = (ctypes.c_float * len(self._adapters))(*[s for _, s in self._adapters])
        if lc.llama_set_adapters_lora(ctx.ctx, adapters, len(self._adapters), scales):
            raise RuntimeError(f"{self.name}: llama.cpp refused the LoRA adapter(s): {_NATIVE.recent_problems()}")

    def __del__(self) -> None:
        try:
            if getattr(self, "_batch", None) is not None:
                self._lc.llama_batch_free(self._batch)
                self._batch = None
        except Exception:
            pass

    # -- the decoding context ---------------------------------------------------------------
    def _forget(self) -> None:
        """Empty every stream of the context (what prompt reuse may keep is gone)."""
        if self._ctx is not None:
            self._lc.llama_memory_clear(self._lc.llama_get_memory(self._ctx.ctx), True)
        self._kept = [[] for _ in range(self._shape[0])]

    def _context(self, n_seq: int, cells: int):
        """A context with room for ``n_seq`` sequences of ``cells`` tokens each (grown when too small)."""
        if self._batch is None:
            raise ValueError(f"{self.name} is closed")
        cells = -(-cells // _CELLS) * _CELLS
        have_seq, have_cells = self._shape
        if self._ctx is not None and have_seq >= n_seq and have_cells >= cells:
            return self._ctx
        if self.reuse_prompts and have_cells < cells <= 2 * have_cells and 2 * have_cells * max(n_seq, have_seq) <= self.n_ctx:
            cells = 2 * have_cells  # grow geometrically (module docstring: prompt reuse)
        cells = max(cells, have_cells) if max(cells, have_cells) * n_seq <= self.n_ctx else cells
        n_seq = max(n_seq, have_seq) if max(n_seq, have_seq) * cells <= self.n_ctx else n_seq
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
        from llama_cpp import _internals

        lc = self._lc
        params = lc.llama_context_default_params()
        params.n_ctx = n_seq * cells
        params.n_seq_max = n_seq
        params.kv_unified = False                 # a stream per sequence: outputs independent of the batch
        params.n_batch = self.n_batch
        params.n_ubatch = self.n_batch
        params.n_threads = self.n_threads
        params.n_threads_batch = self.n_threads
        params.flash_attn_type = lc.LLAMA_FLASH_ATTN_TYPE_DISABLED  # as llama_cpp.Llama's default
        params.no_perf = True
        try:
            self._ctx = _internals.LlamaContext(model=self.llama._model, params=params, verbose=False)
        except ValueError as exc:
            raise RuntimeError(f"{self.name}: llama.cpp could not create a context for {n_seq} sequences x {cells} "
                               f"tokens: {_NATIVE.recent_problems() or exc}") from exc
        if self._adapters:
            self._apply_adapters(self._ctx)
        self._shape = (n_seq, cells)
        self._kept = [[] for _ in range(n_seq)]
        log.debug("%s: llama.cpp context of %d sequences x %d cells", self.name, n_seq, cells)
        return self._ctx

    def _groups(self, needs: list[int], batch_size: int) -> list[list[int]]:
        """Indices in order, cut into groups of at most ``batch_size`` whose KV cells fit in ``n_ctx``."""
        groups: list[list[int]] = []
        current: list[int] = []
        widest = 0
        for i, need in enumerate(needs):
            cells = -(-need // _CELLS) * _CELLS
            if cells > self.n_ctx:
                raise ValueError(f"{self.name}: a sequence of {need} tokens exceeds n_ctx {self.n_ctx}")
            if current and (len(current) == batch_size or max(widest, cells) * (len(current) + 1) > self.n_ctx):
                groups.append(current)
                current, widest = [], 0
            current.append(i)
            widest = max(widest, cells)
        if current:
            groups.append(current)
        return groups

    def _decode(self, ctx, tokens: Sequence[int], pos: Sequence[int], seq: Sequence[int], want: Sequence[bool],
                on_logits: Callable[[np.ndarray, np.ndarray], None]) -> None:
        """Feed the entries (token, position, sequence, whether its logits are wanted) in chunks of ``n_batch``;
        ``on_logits(entry indices, float32 logits (n, V))`` gets each chunk's wanted rows (a view, valid in the call)."""
        lc, b = self._lc, self._batch
        n = len(tokens)
        self.tokens_fed += n
        tok_v = np.ctypeslib.as_array(b.token, shape=(self.n_batch,))
        pos_v = np.ctypeslib.as_array(b.pos, shape=(self.n_batch,))
        nseq_v = np.ctypeslib.as_array(b.n_seq_id, shape=(self.n_batch,))
        out_v = np.ctypeslib.as_array(ctypes.cast(b.logits, ctypes.POINTER(ctypes.c_int8)), shape=(self.n_batch,))
        tokens, pos, seq = np.asarray(tokens, dtype=np.int32), np.asarray(pos, dtype=np.int32), list(seq)
        want = np.asarray(want, dtype=bool)
        for start in range(0, n, self.n_batch):
            stop = min(n, start + self.n_batch)
            m = stop - start
            tok_v[:m] = tokens[start:stop]
            pos_v[:m] = pos[start:stop]
            nseq_v[:m] = 1
            out_v[:m] = want[start:stop]
            for j in range(m):
                b.seq_id[j][0] = seq[start + j]
            b.n_tokens = m
            rc = lc.llama_decode(ctx.ctx, b)
            if rc != 0:
                raise RuntimeError(f"{self.name}: llama_decode returned {rc} ({_NATIVE.recent_problems() or 'no detail'})")
            rows = np.flatnonzero(want[start:stop]) + start
            if len(rows):
                logits = np.ctypeslib.as_array(lc.llama_get_logits(ctx.ctx), shape=(len(rows), self.n_vocab))
                on_logits(rows, logits)

    # -- generation ---------------------------------------------------------------------------
    def _generate_ids(self, prompt_ids: list[list[int]], *, max_new_tokens: int = 64, temperature: float = 0.0,
                      top_p: float = 1.0, seed: int = 0, stop: Sequence[str] = (), batch_size: int = 8) -> list[str]:
        stop = self._generation_request(prompt_ids, max_new_tokens, temperature, top_p, batch_size, stop)
        for ids in prompt_ids:
            if len(ids) + max_new_tokens > self.max_length:
                raise ValueError(f"generate: prompt of {len(ids)} tokens + max_new_tokens {max_new_tokens} exceeds "
                                 f"{self.name}'s context of {self.max_length} tokens")
        out = [""] * len(prompt_ids)
        if max_new_tokens == 0:
            return out
        groups = self._groups([len(ids) + max_new_tokens for ids in prompt_ids], batch_size)
        if len(groups) > 1:
            groups = progress(groups, desc=f"generate {self.name}", unit="batch")
        for idx in groups:
            rngs = None if temperature == 0 else [make_rng(job_seed(seed, "llm-sample", i)) for i in idx]
            texts = self._generate_group([prompt_ids[i] for i in idx], max_new_tokens, temperature, top_p, rngs, stop)
            for i, text in zip(idx, texts):
                out[i] = text
        return out

    def _reuse(self, ctx, prompt_ids, limits: Sequence[int] | None = None) -> list[int]:
        """For each stream ``s``, how many leading tokens of ``prompt_ids[s]`` its cells already hold, at most
        ``limits[s]`` (default all but the last token, whose logits are needed); the cells after them are
        removed (module docstring). Without ``reuse_prompts`` every stream is emptied and every prompt fed whole."""
        if not self.reuse_prompts:
            self._forget()
            return [0] * len(prompt_ids)
        lc = self._lc
        mem = lc.llama_get_memory(ctx.ctx)
        start = []
        for s, p in enumerate(prompt_ids):
            kept, k = self._kept[s], 0
            limit = min(len(kept), len(p) - 1 if limits is None else limits[s])
            while k < limit and kept[k] == p[k]:
                k += 1
            if not lc.llama_memory_seq_rm(mem, s, k, -1):
                lc.llama_memory_seq_rm(mem, s, 0, -1)
                k = 0
            self._kept[s] = []  # until this call's feed succeeds
            start.append(k)
        return start

    def _share(self, ctx, seqs: list[list[int]], limits: Sequence[int], start: list[int]) -> list[int]:
        """With ``share_prefixes``: the prefixes that the sequences of this group share (at most ``limits[s]``
        tokens of sequence ``s``) fed once and copied to every stream below them; returns how many leading
        tokens each stream holds. Streams that already hold tokens (prompt reuse) take no part."""
        if not self.share_prefixes or len(seqs) < 2:
            return start
        lc = self._lc
        mem = lc.llama_get_memory(ctx.ctx)
        rounds, reach = _shared_prefix_plan(seqs, [lim if k == 0 else 0 for lim, k in zip(limits, start)])
        for copies, feeds in rounds:
            for src, dst in copies:
                # across streams llama.cpp copies a whole stream (p0 = p1 = -1), at the next decode
                lc.llama_memory_seq_cp(mem, src, dst, -1, -1)
            if feeds:
                tokens, pos, seq = [], [], []
                for s, a, b in feeds:
                    tokens += seqs[s][a:b]
                    pos += range(a, b)
                    seq += [s] * (b - a)
                self._decode(ctx, tokens, pos, seq, [False] * len(tokens), lambda rows, logits: None)
        return [max(k, r) for k, r in zip(start, reach)]

    def _generate_group(self, prompt_ids, max_new_tokens, temperature, top_p, rngs, stop) -> list[str]:
        n = len(prompt_ids)
        ctx = self._context(n, max(len(p) for p in prompt_ids) + max_new_tokens)
        start = self._share(ctx, prompt_ids, [len(p) - 1 for p in prompt_ids], self._reuse(ctx, prompt_ids))
        tok = self.tokenizer
        new: list[list[int]] = [[] for _ in range(n)]
        texts = [""] * n
        done = [False] * n
        nxt: dict[int, int] = {}  # sequence -> its next token, chosen from the logits of the last step

        def choose(rows, logits):
            for r, entry in enumerate(rows):
                s = owner[entry]
                nxt[s] = _sample(logits[r], temperature, top_p, None if rngs is None else rngs[s])

        tokens, pos, seq, want, owner = [], [], [], [], {}
        for s, p in enumerate(prompt_ids):  # every prompt's new part in one feed; logits at its last token
            fresh = p[start[s]:]
            owner[len(tokens) + len(fresh) - 1] = s
            tokens += fresh
            pos += range(start[s], len(p))
            seq += [s] * len(fresh)
            want += [False] * (len(fresh) - 1) + [True]
        self._decode(ctx, tokens, pos, seq, want, choose)
        kept = [list(p) for p in prompt_ids]  # what each stream's cells hold: its positions come from it
        for t in range(max_new_tokens):
            for s in sorted(nxt):
                token = nxt[s]
                if token in tok.eos_ids:
                    done[s] = True
                    continue
                new[s].append(token)
                if stop:
                    texts[s], done[s] = cut_at_stop(tok.decode(new[s]), stop)
            if all(done) or t == max_new_tokens - 1:
                break
            # Finished sequences leave the batch: each step costs only what is still decoding.
            live = [s for s in sorted(nxt) if not done[s]]
            tokens = [nxt[s] for s in live]
            pos = [len(kept[s]) for s in live]
            owner = dict(enumerate(live))
            nxt.clear()
            self._decode(ctx, tokens, pos, live, [True] * len(live), choose)
            for s, token in zip(live, tokens):
                kept[s].append(token)
        self._kept[:n] = kept
        return [cut_at_stop(tok.decode(ids), stop)[0] for ids in new]

    # -- scoring ------------------------------------------------------------------------------
    def score_tokens(self, contexts: list[list[int]], targets: list[list[int]], *, batch_size: int = 8) -> list[np.ndarray]:
        """Log-probabilities (float64) of each token of ``targets[i]`` after ``contexts[i]`` (token ids)."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        out: list[np.ndarray] = [np.empty(0)] * len(contexts)
        lengths = [len(c) + len(t) for c, t in zip(contexts, targets)]
        for n in lengths:
            if n > self.max_length:
                raise ValueError(f"{self.name}: a sequence of {n} tokens exceeds the context of {self.max_length}")
        for idx in self._groups(lengths, batch_size):
            ctx = self._context(len(idx), max(lengths[i] for i in idx))
            fulls = [contexts[i] + targets[i] for i in idx]
            # a stream may already hold the context (prompt reuse), up to the token whose logits come first
            limits = [len(contexts[i]) - 1 for i in idx]
            start = self._share(ctx, fulls, limits, self._reuse(ctx, fulls, limits))
            tokens, pos, seq, want, target, first = [], [], [], [], [], []
            for s, (i, full) in enumerate(zip(idx, fulls)):
                c, k = len(contexts[i]), start[s]
                first.append(len(tokens) + c - 1 - k)  # where position c-1 lands in this feed
                tokens += full[k:]
                pos += range(k, len(full))
                seq += [s] * (len(full) - k)
                # logits at position j predict token j + 1: positions c-1 .. len-2
                want += [c - 1 <= j < len(full) - 1 for j in range(k, len(full))]
                target += [full[j + 1] if c - 1 <= j < len(full) - 1 else -1 for j in range(k, len(full))]
            target = np.asarray(target)
            values = np.zeros(len(tokens), dtype=np.float64)

            def take(rows, logits, values=values, target=target):
                values[rows] = _log_softmax_at(logits, target[rows])

            self._decode(ctx, tokens, pos, seq, want, take)
            for s, i in enumerate(idx):
                out[i] = values[first[s]:first[s] + len(targets[i])].copy()
            if self.reuse_prompts:
                self._kept[:len(idx)] = [list(f) for f in fulls]
        return out

def load_llamacpp(path: str | os.PathLike, *, name: str | None = None, n_threads: int | None = None,
                  n_ctx: int | None = None, reuse_prompts: bool = False, share_prefixes: bool = True) -> LlamaCppLM:
    """A GGUF file run by llama.cpp (see :class:`LlamaCppLM`)."""
    return LlamaCppLM(path, name=name, n_threads=n_threads, n_ctx=n_ctx, reuse_prompts=reuse_prompts,
                      share_prefixes=share_prefixes)


# -- LoRA adapters: peft checkpoints as llama.cpp GGUF adapters ---------------------------------------
#: Hugging Face projection names -> llama.cpp tensor names (the llama architecture).
_LLAMA_TENSORS = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
                  "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
                  "mlp.down_proj": "ffn_down"}


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file as float32 numpy arrays (F32, F16 and BF16; no torch needed)."""
    with open(path, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(n))
        data = fh.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw, shape, dtype = data[start:end], info["shape"], info["dtype"]
        if dtype == "F32":
            arr = np.frombuffer(raw, dtype="<f4")
        elif dtype == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dtype == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{path}: tensor {name} has dtype {dtype}; a LoRA adapter holds F32, F16 or BF16")
        out[name] = arr.reshape(shape).astype(np.float32)
    return out


def _permute_rows(w: np.ndarray, n_head: int) -> np.ndarray:
    """The row order llama.cpp's Hugging Face converter gives q_proj / k_proj (rotary halves interleaved);
    transformers undoes it when it reads a GGUF file, so an adapter's B (out x r) must be permuted back."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def export_lora_gguf(checkpoint: str | os.PathLike, out: str | os.PathLike, *, base: str | os.PathLike) -> Path:
    """Write the peft LoRA adapter in ``checkpoint`` (``adapter_config.json`` + ``adapter_model.safetensors``,
    as :mod:`repro.llm.lora` saves them) as a llama.cpp LoRA GGUF file for the model in GGUF file ``base``.

    Each ``lora_A`` (r x in) and ``lora_B`` (out x r) becomes ``blk.<i>.<tensor>.weight.lora_a`` / ``.lora_b`` in
    float32, ``adapter.lora.alpha`` the scale's numerator (llama.cpp applies ``alpha / r``; an rsLoRA adapter's
    ``alpha / sqrt(r)`` is written as ``alpha * sqrt(r)``). q_proj and k_proj's B rows take the permutation that
    the GGUF file's own q/k weights carry. Llama-architecture bases, linear projections of the blocks only.
    """
    import gguf

    checkpoint, out = Path(checkpoint), Path(out)
    cfg_path, weights = checkpoint / "adapter_config.json", checkpoint / "adapter_model.safetensors"
    if not cfg_path.is_file() or not weights.is_file():
        raise ValueError(f"{checkpoint} holds no peft LoRA adapter (adapter_config.json and adapter_model.safetensors)")
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    if cfg.get("peft_type", "LORA") != "LORA" or cfg.get("use_dora") or cfg.get("modules_to_save") \
            or cfg.get("rank_pattern") or cfg.get("alpha_pattern") or cfg.get("bias", "none") != "none":
        raise ValueError(f"{checkpoint}: only plain LoRA adapters (no DoRA, bias, per-module ranks or saved modules) "
                         "convert to llama.cpp")
    rank, alpha = int(cfg["r"]), float(cfg["lora_alpha"])
    if cfg.get("use_rslora"):
        alpha *= float(np.sqrt(rank))
    reader = gguf.GGUFReader(str(base))
    field = (lambda key: reader.fields[key].contents() if key in reader.fields else None)
    arch = field("general.architecture")
    if arch != "llama":
        raise ValueError(f"{base}: LoRA export handles llama-architecture GGUF files, not {arch!r}")
    n_head, n_head_kv = int(field("llama.attention.head_count")), int(field("llama.attention.head_count_kv"))
    tensors = _read_safetensors(weights)
    pairs: dict[str, dict[str, np.ndarray]] = {}
    for key, value in tensors.items():
        name = key.removeprefix("base_model.model.").removeprefix("model.")
        parts = name.split(".")
        if len(parts) != 6 or parts[0] != "layers" or parts[4] not in ("lora_A", "lora_B") or parts[5] != "weight":
            raise ValueError(f"{checkpoint}: adapter tensor {key} is not a LoRA matrix of a block's projection")
        module = ".".join(parts[2:4])
        if module not in _LLAMA_TENSORS:
            raise ValueError(f"{checkpoint}: no llama.cpp tensor for {module} (adapter tensor {key})")
        dest = f"blk.{int(parts[1])}.{_LLAMA_TENSORS[module]}.weight"
        if parts[4] == "lora_B" and module in ("self_attn.q_proj", "self_attn.k_proj"):
            value = _permute_rows(value, n_head if module == "self_attn.q_proj" else n_head_kv)
        pairs.setdefault(dest, {})["lora_a" if parts[4] == "lora_A" else "lora_b"] = value
    writer = gguf.GGUFWriter(str(out), arch=arch)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, alpha)
    for dest in sorted(pairs):
        if set(pairs[dest]) != {"lora_a", "lora_b"}:
            raise ValueError(f"{checkpoint}: {dest} has {sorted(pairs[dest])} but needs lora_A and lora_B")
        for part in ("lora_a", "lora_b"):
            writer.add_tensor(f"{dest}.{part}", np.ascontiguousarray(pairs[dest][part]),
                              raw_dtype=gguf.GGMLQuantizationType.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    log.info("wrote the LoRA adapter %s (%d matrix pairs, rank %d, alpha %g) for %s", out, len(pairs), rank, alpha, base)
    return out
