"""The one interface every language-model backend offers, whatever runs behind it.

A paper sees only :class:`LanguageModel`; whether the tokens come from the shipped SmolLM2, a tiny
transformer trained here, or a larger model behind an OpenAI-compatible server is a config choice::

    m = repro.llm.load("smollm2-135m")
    m.generate(["The capital of France is"], max_new_tokens=8)          # ['  Paris. ...']
    m.logprobs(["Q: 2+2=? A:"], [" 4"])                                 # [-0.31]
    m.chat([{"role": "user", "content": "Name a colour."}])              # 'Blue.'
    m.hidden_states(["a b c"], layers=[0, 6], positions=-1)             # (1, 2, 576) array

Backends that cannot offer an operation (an HTTP endpoint has no hidden states) raise
:class:`UnsupportedOperation`, which names the backend; they never return something else instead.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["LanguageModel", "Message", "Conversation", "UnsupportedOperation", "BackendError",
           "as_prompt_list", "as_conversations", "loaded_models"]

#: One chat turn: ``{"role": "system" | "user" | "assistant", "content": str}``.
Message = Mapping[str, str]
Conversation = Sequence[Message]


_LOADED: list[dict[str, Any]] = []


def loaded_models() -> list[dict[str, Any]]:
    """What each language model loaded in this process runs on (:meth:`LanguageModel.describe`), in load
    order, each description once. A job's provenance block records it (:mod:`repro.provenance`): the
    backends' numbers differ at the level of rounding, so a verdict says which one produced it."""
    out: list[dict[str, Any]] = []
    for d in _LOADED:
        if d not in out:
            out.append(dict(d))
    return out


class UnsupportedOperation(ValueError):
    """The backend cannot do this (e.g. hidden states through an HTTP API); the message names it."""


class BackendError(RuntimeError):
    """A backend failed to answer (HTTP status, timeout, malformed reply); the message says where."""


class LanguageModel(abc.ABC):
    """What every backend offers. Generation arguments are keyword-only and mean the same everywhere.

    Attributes
    ----------
    name : the registry name, path or URL the model was loaded from (for logs and provenance).
    """

    name: str = "?"

    @abc.abstractmethod
    def generate(self, prompts: Sequence[str], *, max_new_tokens: int = 64, temperature: float = 0.0,
                 top_p: float = 1.0, seed: int = 0, stop: Sequence[str] = (), batch_size: int = 8) -> list[str]:
        """Continue each prompt as plain text (no chat template).

        Parameters
        ----------
        prompts : the texts to continue.
        max_new_tokens : at most this many tokens per prompt.
        temperature : 0 is greedy decoding; above 0, sampling from softmax(logits / temperature).
        top_p : nucleus sampling (Holtzman et al. 2020): sample only from the smallest set of tokens
            whose probability reaches ``top_p``. 1.0 keeps every token.
        seed : sampling seed. Prompt ``i`` draws from its own stream derived from ``(seed, i)``, so
            its output does not depend on ``batch_size`` or on the other prompts.
        stop : the output ends before the first occurrence of any of these strings.
        batch_size : prompts per forward pass (memory/speed trade-off only).

        Returns
        -------
        The generated continuations, one per prompt, without the prompt.
        """

    @abc.abstractmethod
    def logprobs(self, prompts: Sequence[str], continuations: Sequence[str], *, per_token: bool = False,
                 batch_size: int = 8) -> list[float] | list[np.ndarray]:
        """log p(continuation | prompt) in nats, summed over the continuation's tokens.

        The prompt and the continuation are tokenised separately and concatenated, so the score
        is that of exactly the continuation's own tokens. ``per_token=True`` returns one array of
        token log-probabilities per pair instead of their sum.
        """

    @abc.abstractmethod
    def chat(self, messages: Conversation | Sequence[Conversation], **generate_kwargs: Any) -> str | list[str]:
        """The assistant's reply to one conversation (a list of messages), or to each of a list of
        conversations, rendered with the model's own chat template. Keyword arguments as :meth:`generate`."""

    def hidden_states(self, prompts: Sequence[str], layers: Sequence[int], positions: int | Sequence[int] | slice = -1,
                      *, batch_size: int = 8) -> np.ndarray | list[np.ndarray]:
        """Residual-stream activations of ``layers`` at token ``positions`` of each prompt.

        Layer 0 is the embedding output and layer ``k`` the output of block ``k`` (the Hugging Face
        ``output_hidden_states`` convention). Positions index the prompt's own tokens; negative ones
        count from its end (``-1`` is the last token), whatever the padding.

        Returns
        -------
        ``positions`` an int: array (n_prompts, n_layers, d); a list of ints: (n_prompts, n_layers,
        n_positions, d); a slice (a span, whose length may differ between prompts): a list with one
        (n_layers, span_length, d) array per prompt. float32.
        """
        raise UnsupportedOperation(f"{type(self).__name__} ({self.name}) exposes no hidden states")

    def render_chat(self, messages: Conversation) -> str:
        """The prompt text the model sees for ``messages`` (with the assistant turn opened)."""
        raise UnsupportedOperation(f"{type(self).__name__} ({self.name}) renders chats on the server side")

    def describe(self) -> dict[str, Any]:
        """What this model runs on: ``backend`` and ``model``, and what the backend knows of the numbers it
        produces (weights' quantisation or dtype, threads, adapters, server)."""
        return {"backend": type(self).__name__, "model": self.name}

    def _loaded(self) -> None:
        """Record :meth:`describe` for :func:`loaded_models` (a backend calls it once it is ready, and again
        when what it runs changes, e.g. an adapter is applied)."""
        _LOADED.append(self.describe())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def as_prompt_list(prompts: str | Sequence[str], what: str = "prompts") -> list[str]:
    """``prompts`` as a list of strings; a bare string is refused (it would be iterated by character)."""
    if isinstance(prompts, str):
        raise ValueError(f"{what}: expected a list of strings, got one string {prompts[:40]!r}; wrap it in a list")
    out = list(prompts)
    bad = [i for i, p in enumerate(out) if not isinstance(p, str)]
    if bad:
        raise ValueError(f"{what}: item {bad[0]} is {type(out[bad[0]]).__name__}, not a string")
    return out


def as_conversations(messages: Conversation | Sequence[Conversation]) -> tuple[list[list[dict]], bool]:
    """Normalise ``messages`` to a list of conversations; the flag says whether one was given."""
    if isinstance(messages, Mapping) or isinstance(messages, str):
        raise ValueError("chat: expected a list of messages ({'role': ..., 'content': ...}) or a list of such lists")
    items = list(messages)
    single = bool(items) and isinstance(items[0], Mapping)
    convs = [items] if single else [list(c) for c in items]
    for k, conv in enumerate(convs):
        for j, msg in enumerate(conv):
            if not isinstance(msg, Mapping) or not {"role", "content"} <= set(msg):
                raise ValueError(f"chat: conversation {k}, message {j} needs 'role' and 'content'; got {msg!r}")
            if msg["role"] not in ("system", "user", "assistant"):
                raise ValueError(f"chat: conversation {k}, message {j} has role {msg['role']!r}; "
                                 "expected system, user or assistant")
    return [[dict(m) for m in conv] for conv in convs], single


def check_generation(max_new_tokens: int, temperature: float, top_p: float, batch_size: int) -> None:
    """Refuse generation settings no backend can honour."""
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the first stop string, and whether one was found."""
    hits = [i for s in stop if (i := text.find(s)) >= 0]
    return (text[:min(hits)], True) if hits else (text, False)


class TokenizedLM(LanguageModel):
    """The part of a local backend above its tokens, written once for every backend that runs the model here
    (torch, llama.cpp): prompts and chats are rendered and encoded with ``self.tokenizer``; a backend supplies
    ``_generate_ids`` (new text after each list of prompt tokens) and ``score_tokens`` (log-probabilities of
    target tokens after context tokens)."""

    tokenizer: Any

    def render_chat(self, messages) -> str:
        convs, single = as_conversations(messages)
        if not single:
            raise ValueError("render_chat takes one conversation")
        return self.tokenizer.render_chat(convs[0])

    def generate(self, prompts, *, max_new_tokens=64, temperature=0.0, top_p=1.0, seed=0, stop=(), batch_size=8):
        prompts = as_prompt_list(prompts)
        return self._generate_ids([self.tokenizer.encode(p, prompt=True) for p in prompts], max_new_tokens=max_new_tokens,
                                  temperature=temperature, top_p=top_p, seed=seed, stop=stop, batch_size=batch_size)

    def chat(self, messages, **generate_kwargs):
        convs, single = as_conversations(messages)
        texts = [self.tokenizer.render_chat(c) for c in convs]
        # The rendered template already holds every special token the model expects.
        replies = self._generate_ids([self.tokenizer.encode(t, prompt=False) for t in texts], **generate_kwargs)
        replies = [r.strip() for r in replies]
        return replies[0] if single else replies

    @abc.abstractmethod
    def _generate_ids(self, prompt_ids: list[list[int]], *, max_new_tokens: int = 64, temperature: float = 0.0,
                      top_p: float = 1.0, seed: int = 0, stop: Sequence[str] = (), batch_size: int = 8) -> list[str]:
        """The text generated after each prompt's tokens, cut at the first stop string."""

    @staticmethod
    def _generation_request(prompt_ids: list[list[int]], max_new_tokens: int, temperature: float, top_p: float,
                            batch_size: int, stop: str | Sequence[str]) -> list[str]:
        """Check a generation request; the stop strings as a list."""
        check_generation(max_new_tokens, temperature, top_p, batch_size)
        if any(len(ids) == 0 for ids in prompt_ids):
            raise ValueError("generate: a prompt encodes to no tokens (empty string?) and this tokenizer adds no BOS")
        return [stop] if isinstance(stop, str) else list(stop)

    @abc.abstractmethod
    def score_tokens(self, contexts: list[list[int]], targets: list[list[int]], *, batch_size: int = 8) -> list:
        """Log-probabilities (float64) of each token of ``targets[i]`` after ``contexts[i]`` (token ids)."""

    def logprobs(self, prompts, continuations, *, per_token=False, batch_size=8):
        prompts = as_prompt_list(prompts)
        continuations = as_prompt_list(continuations, "continuations")
        if len(prompts) != len(continuations):
            raise ValueError(f"logprobs: {len(prompts)} prompts but {len(continuations)} continuations")
        ctx, tgt = [], []
        for i, (p, c) in enumerate(zip(prompts, continuations)):
            pi = self._prompt_ids(p, i, "logprobs")
            ci = self.tokenizer.encode(c, prompt=False)
            if not ci:
                raise ValueError(f"logprobs: continuation {i} ({c!r}) encodes to no tokens")
            ctx.append(pi)
            tgt.append(ci)
        per = self.score_tokens(ctx, tgt, batch_size=batch_size)
        return per if per_token else [float(p.sum()) for p in per]

    def _prompt_ids(self, prompt: str, i: int, caller: str) -> list[int]:
        """The tokens a scored continuation is conditioned on: the prompt's, or BOS alone for an empty prompt."""
        ids = self.tokenizer.encode(prompt, prompt=True)
        if ids:
            return ids
        if self.tokenizer.bos_id is None:
            raise ValueError(f"{caller}: prompt {i} is empty and {self.name} has no BOS token to condition on")
        return [self.tokenizer.bos_id]
