"""Hugging Face causal LMs as a :class:`repro.llm.torchlm.TorchLM` core: GGUF files and model folders.

- :func:`load_gguf` reads a GGUF file with ``transformers`` + ``gguf``, which dequantise every tensor
  to ``dtype`` (SmolLM2-135M Q4_1: about 20 s and 540 MB in float32 on 2 cores). Tokenizer and
  chat template come from the same file.
- :func:`save_folder` writes such a model as a plain Hugging Face folder (``model.safetensors``,
  ``config.json``, tokenizer files, ``manifest.json``), atomically: the folder appears whole or not
  at all. ``transformers`` refuses ``save_pretrained`` on a GGUF-loaded model, so the weights are
  written with ``safetensors.torch.save_model`` and the config without its GGUF origin.
- :func:`load_folder` loads such a folder (or any local Hugging Face model folder) in about a second.

Nothing here reaches a hub: every path is local and ``local_files_only=True`` is passed throughout.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import os
from pathlib import Path
from typing import Any

import torch

from repro.io import atomic_path, write_json
from repro.llm.base import UnsupportedOperation
from repro.llm.torchlm import TorchLM

__all__ = ["HFCore", "HFTokenizer", "load_gguf", "load_folder", "save_folder", "torch_dtype", "sha256_of"]

log = logging.getLogger(__name__)

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def torch_dtype(name: str) -> torch.dtype:
    if name not in _DTYPES:
        raise ValueError(f"dtype {name!r} unknown; use one of {', '.join(_DTYPES)}")
    return _DTYPES[name]


def sha256_of(path: str | os.PathLike, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


class HFTokenizer:
    """:class:`repro.llm.torchlm.TokenizerAdapter` over a ``transformers`` tokenizer."""

    def __init__(self, tok: Any, generation_config: Any = None, name: str = "?") -> None:
        self.tok = tok
        self.name = name
        eos = {tok.eos_token_id} if tok.eos_token_id is not None else set()
        gen_eos = getattr(generation_config, "eos_token_id", None)
        eos |= set(gen_eos if isinstance(gen_eos, (list, tuple)) else [gen_eos] if gen_eos is not None else [])
        if not eos:
            raise ValueError(f"{name}: the tokenizer has no end-of-sequence token")
        self.eos_ids = frozenset(eos)
        self.eos_id = tok.eos_token_id if tok.eos_token_id is not None else min(eos)
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else self.eos_id
        self.bos_id = tok.bos_token_id

    def encode(self, text: str, *, prompt: bool) -> list[int]:
        return list(self.tok(text, add_special_tokens=prompt)["input_ids"])

    def decode(self, ids) -> str:
        return self.tok.decode(list(ids), skip_special_tokens=True)

    def render_chat(self, messages: list[dict]) -> str:
        if not getattr(self.tok, "chat_template", None):
            raise UnsupportedOperation(f"{self.name}: the tokenizer has no chat template; use generate()")
        return self.tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def chat_tokens(self, messages: list[dict]) -> tuple[list[int], list[bool]]:
        """Token ids of a whole conversation and, per token, whether it is part of an assistant reply.

        A reply spans from the end of the template rendered up to it (with the assistant turn opened)
        to the end of the template rendered through it, so it includes the end-of-turn marker.
        """
        render = self.tok.apply_chat_template
        if not getattr(self.tok, "chat_template", None):
            raise UnsupportedOperation(f"{self.name}: the tokenizer has no chat template")
        full = render(messages, add_generation_prompt=False, tokenize=False)
        spans = []
        for j, m in enumerate(messages):
            if m["role"] != "assistant":
                continue
            head = render(messages[:j], add_generation_prompt=True, tokenize=False) if j else ""
            upto = render(messages[:j + 1], add_generation_prompt=False, tokenize=False)
            if not full.startswith(head) or not full.startswith(upto):
                raise ValueError(f"{self.name}: the chat template does not render conversations prefix-wise; "
                                 "completion-only loss cannot locate the replies")
            spans.append((len(head), len(upto)))
        enc = self.tok(full, add_special_tokens=False, return_offsets_mapping=True)
        mask = [any(a <= start < b for a, b in spans) for start, _ in enc["offset_mapping"]]
        return list(enc["input_ids"]), mask


class HFCore:
    """:class:`repro.llm.torchlm.Core` over a ``transformers`` causal LM (a key/value cache while decoding)."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model.eval()
        cfg = model.config
        self.n_layers = int(cfg.num_hidden_layers)
        self.max_length = getattr(cfg, "max_position_embeddings", None)
        params = inspect.signature(type(self._base()).forward).parameters
        # transformers 5.x renames past_key_values -> cache (the old name is deprecated until 5.40).
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._keep_kw = "logits_to_keep" if "logits_to_keep" in params else None

    def _base(self) -> torch.nn.Module:
        """The transformers model under any peft wrapper."""
        model = self.model
        get_base = getattr(model, "get_base_model", None)
        return get_base() if callable(get_base) else model

    def forward(self, ids, mask, pos, *, hidden=False):
        if mask.dim() == 3:  # (B, T, T) visibility -> the additive 4D mask transformers passes through as-is
            dtype = next(self.model.parameters()).dtype
            mask = torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
                ~mask.bool(), torch.finfo(dtype).min)[:, None]
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=False,
                         output_hidden_states=hidden)
        return out.logits, (tuple(out.hidden_states) if hidden else None)

    def step(self, ids, mask, pos, state):
        kwargs = {self._cache_kw: state, "use_cache": True}
        if self._keep_kw:
            kwargs[self._keep_kw] = 1  # only the last position's logits are needed
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, **kwargs)
        cache = getattr(out, "cache", None)
        if cache is None:
            cache = out.past_key_values
        return out.logits[:, -1, :], cache

    def select(self, state, rows):
        state.batch_select_indices(rows)
        return state


def _wrap(name: str, model: torch.nn.Module, tok: Any, device: str) -> TorchLM:
    model.to(device)
    return TorchLM(name, HFCore(model), HFTokenizer(tok, getattr(model, "generation_config", None), name),
                   device=device)


def load_gguf(path: str | os.PathLike, *, name: str | None = None, dtype: str = "float32", device: str = "cpu") -> TorchLM:
    """A GGUF file, dequantised to ``dtype`` by ``transformers`` (needs the ``gguf`` package)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"GGUF file {path} does not exist")
    log.info("loading %s from GGUF %s (dequantising to %s)", name or path.name, path, dtype)
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch_dtype(dtype),
                                                 local_files_only=True)
    return _wrap(name or str(path), model, tok, device)


def load_folder(path: str | os.PathLike, *, name: str | None = None, dtype: str = "float32", device: str = "cpu") -> TorchLM:
    """A local Hugging Face model folder (``config.json`` + weights + tokenizer files)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    if not (path / "config.json").is_file():
        raise ValueError(f"{path} is not a Hugging Face model folder (no config.json)")
    log.info("loading %s from %s (%s)", name or path.name, path, dtype)
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype(dtype), local_files_only=True)
    return _wrap(name or str(path), model, tok, device)


def save_folder(lm: TorchLM, out_dir: str | os.PathLike, *, manifest: dict | None = None) -> Path:
    """Write ``lm`` (a Hugging Face core) as a model folder that :func:`load_folder` reads.

    The folder is built beside ``out_dir`` and renamed onto it when complete; an existing folder
    is replaced. ``manifest.json`` records ``manifest`` (e.g. the source file and its sha256).
    """
    from safetensors.torch import save_model

    if not isinstance(lm.core, HFCore):
        raise ValueError(f"save_folder writes Hugging Face models; {lm.name} is {type(lm.core).__name__}")
    out_dir = Path(out_dir)
    model = lm.core._base()
    with atomic_path(out_dir) as tmp:  # swaps a whole folder in; clears a killed job's leftovers
        tmp.unlink()
        tmp.mkdir()
        save_model(model, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        config = model.config.to_dict()
        for key in ("quantization_config", "gguf_file", "_name_or_path"):
            config.pop(key, None)
        type(model.config).from_dict(config).save_pretrained(str(tmp))
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.save_pretrained(str(tmp))
        lm.tokenizer.tok.save_pretrained(str(tmp))
        write_json(tmp / "manifest.json", {"name": lm.name, "dtype": str(next(model.parameters()).dtype),
                                           "n_parameters": sum(p.numel() for p in model.parameters()),
                                           **(manifest or {})})
    log.info("wrote %s", out_dir)
    return out_dir
