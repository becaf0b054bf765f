"""The evalmeta DAG's grid and the part of the preset each rule receives (pure Python, parse time).

``workflow/rules/evalmeta.smk`` imports this module while Snakemake parses the workflow, so it uses
the standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CORPORA", "MODELS", "seeds", "base_input", "data_config", "base_config", "finetune_config",
           "evaluate_config", "evaluate_inputs", "response_targets", "training_targets", "probe_data_config",
           "probe_config", "probe_targets", "check_preset"]

CORPORA = ("trait", "control", "topic")  # repro.papers.evalmeta.corpus.CORPORA (not imported: torch-free parse)
MODELS = ("base", *CORPORA)
PRETRAINED_INPUT = "resources/llm/{name}/model.safetensors"
TINY_BASE = "results/evalmeta/base/model.safetensors"
ADAPTER = "results/evalmeta/lora/{corpus}/seed{seed}/best"  # the folder load_lora reads
TRAINING = "results/evalmeta/lora/{corpus}/seed{seed}/train.json"
RESPONSES = "results/evalmeta/responses/{model}/seed{seed}.json"
PROBE = "results/evalmeta/probe/{model}/seed{seed}.json"


def seeds(cfg: dict) -> list[int]:
    return list(range(cfg["seeds"]))


def base_input(cfg: dict) -> str:
    """The base model's weights: the tiny model trained here, or the llm_cache rule's copy."""
    base = cfg["base"]
    return TINY_BASE if base["kind"] == "tiny" else PRETRAINED_INPUT.format(name=base["model"])


def data_config(cfg: dict) -> dict[str, Any]:
    return {"n_items": cfg["n_items"], "corpus": cfg["corpus"], "base": cfg["base"]}


def base_config(cfg: dict) -> dict[str, Any]:
    return {"base": cfg["base"]}


def finetune_config(cfg: dict) -> dict[str, Any]:
    return {"base": cfg["base"], "lora": cfg["lora"]}


def evaluate_config(cfg: dict) -> dict[str, Any]:
    return {"base": cfg["base"], "eval_backend": cfg["eval_backend"], "generation": cfg["generation"],
            "judge": cfg["judge"]}


def evaluate_inputs(cfg: dict, model: str, seed: int | str) -> dict[str, str]:
    out = {"base": base_input(cfg)}
    if model != "base":
        out["adapter"] = ADAPTER.format(corpus=model, seed=seed)
    return out


def response_targets(cfg: dict) -> list[str]:
    return [RESPONSES.format(model=m, seed=s) for m in MODELS for s in seeds(cfg)]


def training_targets(cfg: dict) -> list[str]:
    return [TRAINING.format(corpus=c, seed=s) for c in CORPORA for s in seeds(cfg)]


def probe_data_config(cfg: dict) -> dict[str, Any]:
    return {"corpus": cfg["corpus"], "probe": cfg["probe"]}


def probe_config(cfg: dict) -> dict[str, Any]:
    # the probe's backend (probe.backend) defaults to the evaluation's
    return {"base": cfg["base"], "eval_backend": cfg["probe"].get("backend", cfg["eval_backend"]),
            "max_length": cfg["lora"]["max_length"], "probe": cfg["probe"]}


def probe_targets(cfg: dict) -> list[str]:
    """The knowledge probe's runs: the base once (it has no seed: log-probabilities only), each tuned
    model per seed."""
    return [PROBE.format(model="base", seed=0)] + [PROBE.format(model=c, seed=s) for c in CORPORA for s in seeds(cfg)]


def check_preset(cfg: dict, where: str) -> None:
    """Refuse values the schema cannot express, naming the key (``where`` is e.g. ``evalmeta.small``)."""
    lo, hi = cfg["corpus"]["sentences"]
    if lo > hi:
        raise ValueError(f"config: {where}.corpus.sentences [{lo}, {hi}]: the minimum exceeds the maximum")
    n_docs = 7 * cfg["corpus"]["docs_per_trait"]
    held = max(1, round(cfg["lora"]["heldout"] * n_docs))
    if held >= n_docs:
        raise ValueError(f"config: {where}.lora.heldout ({cfg['lora']['heldout']}) leaves no training document of "
                         f"{n_docs} (7 traits x corpus.docs_per_trait)")
    base = cfg["base"]
    if base["kind"] == "tiny" and base["tiny"]["d_model"] % base["tiny"]["n_head"]:
        raise ValueError(f"config: {where}.base.tiny.d_model {base['tiny']['d_model']} is not divisible by "
                         f"n_head {base['tiny']['n_head']}")
    if base["kind"] == "pretrained" and not base.get("model"):
        raise ValueError(f"config: {where}.base.model must name a model when base.kind is pretrained")
    for key, backend in (("eval_backend", cfg["eval_backend"]), ("probe.backend", cfg["probe"].get("backend"))):
        if backend == "llamacpp" and base["kind"] != "pretrained":
            raise ValueError(f"config: {where}.{key} llamacpp needs a pretrained base with a GGUF file "
                             f"(base.kind is {base['kind']}: use torch)")
