"""The part of incrimination's preset each rule receives, and the checks the schema cannot express.

Read by ``workflow/rules/incrimination.smk`` at parse time, so it imports nothing heavy.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MOTIVES", "PRETRAINED_INPUT", "check_preset", "agent_spec", "agent_input", "testbed_config",
           "agent_config"]

#: The planted motives, one testbed job each (the same tuple as repro.papers.incrimination.agents.MOTIVES).
MOTIVES = ("laziness", "confusion", "strategic", "obedience", "benign")
PRETRAINED_INPUT = "resources/llm/{name}/model.safetensors"
_TESTBED_KEYS = ("environments", "seeds", "faithfulness", "samples", "protocol")


def check_preset(cfg: dict, where: str) -> None:
    """Refuse values the schema cannot express, naming the key (``where`` is e.g. ``incrimination.small``)."""
    for key in ("faithful", "unfaithful"):
        if cfg["claims"][key] not in cfg["faithfulness"]:
            raise ValueError(f"config: {where}.claims.{key} ({cfg['claims'][key]}) is not one of "
                             f"{where}.faithfulness {cfg['faithfulness']}")
    if cfg["claims"]["unfaithful"] >= cfg["claims"]["faithful"]:
        raise ValueError(f"config: {where}.claims.unfaithful must be below {where}.claims.faithful")
    if 1.0 not in cfg["faithfulness"]:
        raise ValueError(f"config: {where}.faithfulness must include 1.0 (the classifier's planted labels)")
    names = [a["name"] for a in cfg["agents"]]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"config: {where}.agents names {dup} more than once")
    for k, a in enumerate(cfg["agents"]):
        if a["kind"] == "scripted" and a["motive"] == a["decoy"]:
            raise ValueError(f"config: {where}.agents[{k}] ({a['name']}): decoy equals motive {a['motive']!r}")


def agent_spec(cfg: dict, name: str) -> dict[str, Any]:
    for a in cfg["agents"]:
        if a["name"] == name:
            return a
    raise ValueError(f"config: no agent named {name!r}; agents: {', '.join(a['name'] for a in cfg['agents'])}")


def agent_input(cfg: dict, name: str) -> list[str]:
    """The cached weights a pretrained agent on the torch backend waits for (nothing for a scripted one,
    nor for one on llamacpp, which reads the GGUF file shipped with its package)."""
    spec = agent_spec(cfg, name)
    if spec["kind"] != "pretrained" or spec.get("backend", "torch") == "llamacpp":
        return []
    return [PRETRAINED_INPUT.format(name=spec["model"])]


def testbed_config(cfg: dict) -> dict[str, Any]:
    return {k: cfg[k] for k in _TESTBED_KEYS}


def agent_config(cfg: dict, name: str) -> dict[str, Any]:
    return {"agent": agent_spec(cfg, name), "environments": cfg["environments"], "protocol": cfg["protocol"],
            "agent_samples": cfg["agent_samples"], "generation": cfg["generation"]}
