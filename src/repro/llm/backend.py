"""Which model an LM paper talks to, chosen in ``config.yaml`` (block ``llm:``), never in code.

    llm:
      small:
        backend: local                 # local (torch) | llamacpp | http
        model: smollm2-135m            # load(name) for local and llamacpp; the server's model name for http
        dtype: float32
        http: {base_url: null, api_key_env: OPENAI_API_KEY, timeout_s: 60, max_retries: 3, backoff_s: 1.0, max_workers: 4}
        llamacpp: {n_threads: null, n_ctx: null}
        generation: {max_new_tokens: 64, temperature: 0.0, top_p: 1.0, batch_size: 8}

``from_config(cfg)`` builds the backend; a paper then calls ``generate``/``chat`` with
``**asdict(cfg.generation)`` overridden by its own budget. The schema is
``workflow/schemas/llm.schema.yaml``; :func:`repro.config.from_dict` applies the same keys strictly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from repro.config import from_dict
from repro.llm.base import LanguageModel
from repro.llm.http_backend import OpenAICompatibleLM, api_key_from_env

__all__ = ["HTTPConfig", "LlamaCppConfig", "GenerationConfig", "LLMConfig", "from_config", "connect"]


@dataclass(frozen=True)
class HTTPConfig:
    """An OpenAI-compatible server (used when ``backend: http``)."""

    base_url: str | None = None
    """e.g. http://127.0.0.1:8000/v1"""
    api_key_env: str | None = "OPENAI_API_KEY"
    """environment variable holding the API key (never the key itself in config.yaml); null: no key"""
    timeout_s: float = 60.0
    """deadline of each attempt of a request: connect, send and the whole reply"""
    max_retries: int = 3
    """retries of transient failures (connection, timeout, 408/409/429/5xx)"""
    backoff_s: float = 1.0
    """first retry delay, doubled each retry"""
    max_workers: int = 4
    """concurrent requests"""


@dataclass(frozen=True)
class LlamaCppConfig:
    """llama.cpp in the job's process (used when ``backend: llamacpp``)."""

    n_threads: int | None = None
    """CPU threads; null: the job's threads (OMP_NUM_THREADS as repro.jobs sets it), else 1"""
    n_ctx: int | None = None
    """KV-cache cells shared by the sequences decoded together; null: the model's training context"""
    reuse_prompts: bool = False
    """keep each sequence's cells between generations and feed only what follows the common prefix (a
    conversation continued turn by turn reads each message once; equal to an empty cache up to rounding)"""
    share_prefixes: bool = True
    """feed a prefix that several prompts of one batch share once and copy its cells to the others (the
    same numbers as feeding each prompt whole, bit for bit as measured; less prompt processing)"""


@dataclass(frozen=True)
class GenerationConfig:
    """Default generation settings; a paper's preset states its own token budget on top."""

    max_new_tokens: int = 64
    temperature: float = 0.0
    """0 = greedy"""
    top_p: float = 1.0
    batch_size: int = 8
    """prompts per forward pass (local backend)"""


@dataclass(frozen=True)
class LLMConfig:
    backend: str = "local"
    """local (the torch backend in this process), llamacpp (llama.cpp in this process, on a GGUF file) or
    http (an OpenAI-compatible server)"""
    model: str = "smollm2-135m"
    """local, llamacpp: a name for repro.llm.load; http: the model name the server expects"""
    dtype: str = "float32"
    """local Hugging Face models: float32, bfloat16 or float16 (llamacpp keeps the file's quantisation)"""
    http: HTTPConfig = field(default_factory=HTTPConfig)
    llamacpp: LlamaCppConfig = field(default_factory=LlamaCppConfig)
    generation: GenerationConfig = field(default_factory=GenerationConfig)


def connect(base_url: str, model: str, *, api_key: str | None = None, **kwargs: Any) -> OpenAICompatibleLM:
    """An OpenAI-compatible server as a :class:`LanguageModel` (keyword arguments as :class:`HTTPConfig`)."""
    return OpenAICompatibleLM(base_url, model, api_key=api_key, **kwargs)


def from_config(cfg: LLMConfig | Mapping[str, Any], where: str = "llm", *, root: str | os.PathLike | None = None,
                device: str = "cpu") -> LanguageModel:
    """The backend that ``cfg`` (an :class:`LLMConfig` or its config.yaml block) names."""
    if not isinstance(cfg, LLMConfig):
        cfg = from_dict(LLMConfig, cfg, where)
    if cfg.backend == "local":
        from repro.llm.models import load

        return load(cfg.model, root=root, dtype=cfg.dtype, device=device)
    if cfg.backend == "llamacpp":
        from repro.llm.models import load

        return load(cfg.model, root=root, device=device, backend="llamacpp", n_threads=cfg.llamacpp.n_threads,
                    n_ctx=cfg.llamacpp.n_ctx, reuse_prompts=cfg.llamacpp.reuse_prompts,
                    share_prefixes=cfg.llamacpp.share_prefixes)
    if cfg.backend == "http":
        h = cfg.http
        if not h.base_url:
            raise ValueError(f"{where}.http.base_url must be set when {where}.backend is http")
        return connect(h.base_url, cfg.model, api_key=api_key_from_env(h.api_key_env), timeout_s=h.timeout_s,
                       max_retries=h.max_retries, backoff_s=h.backoff_s, max_workers=h.max_workers)
    raise ValueError(f"{where}.backend is {cfg.backend!r}; expected local or http, or llamacpp")
