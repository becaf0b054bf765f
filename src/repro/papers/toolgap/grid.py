"""The toolgap DAG's grid and the part of the preset each rule receives (pure Python, parse time).

``workflow/rules/toolgap.smk`` imports this module while Snakemake parses the workflow, so it uses
the standard library only. A rule's params hold only the preset keys it reads. Evaluation and probes
share one job per model (both tasks), so editing a probe setting reruns that job's generation too: at
smoke scale a job's start-up costs more than its probes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["tasks", "model_names", "tiny_models", "model_spec", "model_input", "data_config", "train_config",
           "evaluate_config", "run_targets", "probe_targets", "model_outputs", "loss_targets"]

#: Where a prompted (pretrained) model's weights come from: the llm_cache rule's copy.
PRETRAINED_INPUT = "resources/llm/{name}/model.safetensors"
TINY_DIR = "results/toolgap/models/{name}"


def tasks(cfg: dict, source: str = "synthetic") -> list[str]:
    """The two tasks: arithmetic, and the factual one (the generated knowledge base, or TruthfulQA
    when the block's source is local)."""
    return ["arithmetic", "truthfulqa" if source == "local" else "knowledge"]


def model_names(cfg: dict) -> list[str]:
    return [m["name"] for m in cfg["models"]]


def tiny_models(cfg: dict) -> list[str]:
    return [m["name"] for m in cfg["models"] if m["kind"] == "tiny"]


def model_spec(cfg: dict, name: str) -> dict[str, Any]:
    for m in cfg["models"]:
        if m["name"] == name:
            return dict(m)
    raise ValueError(f"toolgap: no model {name!r} in the preset's models ({', '.join(model_names(cfg))})")


def model_input(cfg: dict, name: str) -> str:
    """The file a model's evaluation waits for (its trained or cached weights)."""
    spec = model_spec(cfg, name)
    if spec["kind"] == "tiny":
        return TINY_DIR.format(name=name) + "/model.safetensors"
    return PRETRAINED_INPUT.format(name=spec["model"])


def data_config(cfg: dict, source: str = "synthetic") -> dict[str, Any]:
    out = {k: cfg[k] for k in ("arithmetic", "knowledge", "n_items", "corpus_repeats")}
    if source == "local":
        out["truthfulqa"] = cfg["truthfulqa"]
    return out


def train_config(cfg: dict, name: str) -> dict[str, Any]:
    return {"model": model_spec(cfg, name), "tiny": cfg["tiny"]}


def evaluate_config(cfg: dict, name: str) -> dict[str, Any]:
    return {"model": model_spec(cfg, name), "samples": cfg["samples"],
            "unnecessary_min_correct": cfg["unnecessary_min_correct"], "generation": cfg["generation"],
            "probe": dict(cfg["probe"])}


def model_outputs(pattern: str, source: str = "synthetic") -> list[str]:
    """One evaluation job's files of a kind, one per task: ``pattern`` holds ``{{model}}`` and ``{task}``."""
    return [pattern.format(task=t) for t in tasks({}, source)]


def run_targets(cfg: dict, source: str = "synthetic", prefix: str = "results/toolgap/runs") -> list[str]:
    return [f"{prefix}/{m}/{t}.json" for m in model_names(cfg) for t in tasks(cfg, source)]


def probe_targets(cfg: dict, source: str = "synthetic", prefix: str = "results/toolgap/probes") -> list[str]:
    return [f"{prefix}/{m}/{t}.json" for m in model_names(cfg) for t in tasks(cfg, source)]


def loss_targets(cfg: dict) -> list[str]:
    """The tiny models' training-loss files (aggregate reports the loss at the end of training)."""
    return [TINY_DIR.format(name=m) + "/loss.json" for m in tiny_models(cfg)]


def check_preset(cfg: dict, where: str) -> None:
    """Refuse values the schema cannot express, naming the key (``where`` is e.g. ``toolgap.small``)."""
    if cfg["unnecessary_min_correct"] > cfg["samples"]:
        raise ValueError(f"config: {where}.unnecessary_min_correct ({cfg['unnecessary_min_correct']}) exceeds "
                         f"{where}.samples ({cfg['samples']}): no item could be labelled unnecessary")
    names = model_names(cfg)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"config: {where}.models names {dup} more than once")
    for k, m in enumerate(cfg["models"]):
        if m["kind"] == "tiny" and not m["name"].startswith("tiny-"):
            raise ValueError(f"config: {where}.models[{k}].name {m['name']!r}: tiny models are named tiny-...")
        if m["kind"] == "tiny" and m["d_model"] % m["n_head"]:
            raise ValueError(f"config: {where}.models[{k}] ({m['name']}): d_model {m['d_model']} is not divisible "
                             f"by n_head {m['n_head']}")
    unknown = sorted(set(cfg["arithmetic"]["tool_families"]) - set(cfg["arithmetic"]["families"]))
    if unknown:
        raise ValueError(f"config: {where}.arithmetic.tool_families {unknown} are not in {where}.arithmetic.families")
