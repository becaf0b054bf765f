"""The driftbench DAG's grid and the part of the preset each rule receives (standard library only:
``workflow/rules/driftbench.smk`` imports this module at parse time)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CONDITIONS", "ReleaseLayout", "release_layout", "release_files", "model_names", "model_spec", "model_input",
           "run_config", "judge_config", "transcript_targets", "score_targets", "aggregate_input", "under_test",
           "check_preset"]

CONDITIONS = ("single_shot", "multi_turn_neutral", "multi_turn_pressure", "checkpointed_pressure")
PRETRAINED_INPUT = "resources/llm/{name}/model.safetensors"
RELEASE = "results/driftbench/release.json"


@dataclass(frozen=True)
class ReleaseLayout:
    """The files of a released folder that :func:`repro.papers.driftbench.experiment.read_release` reads, and
    only those: they are the inputs of driftbench_release, so an edit to one reruns it and what reads it.

    Two namings of the judge's records are read. ``paper``: the published release (the reference code's
    dataset card), one record per file in ``scores/judge_<run>.jsonl`` with unprefixed fields
    (``constraint_adherence``), beside ``scores/auditor_<run>.jsonl``, whose run ids the reference's
    aggregation inner-joins with the judge's; its other score files (``blind_``, ``structured_``, ...) and
    its subfolders (open-weight, monitored, follow-ups) are not part of the tables rebuilt here. ``harness``:
    what this project's harness writes, every ``scores/*.jsonl`` a judge record with ``j_``-prefixed fields.
    """

    naming: str
    briefs: tuple[str, ...] = ()
    transcripts: tuple[str, ...] = ()
    judge: tuple[str, ...] = ()
    auditor: tuple[str, ...] = ()
    summaries: tuple[str, ...] = ()
    """the KBV summaries present, at the paper's place (analysis/) or ours (the top); the reader takes one"""
    ignored: tuple[str, ...] = ()
    """score files read by neither naming (other judges' records)"""

    def files(self) -> list[str]:
        return sorted(self.briefs + self.transcripts + self.judge + self.auditor + self.summaries)


JUDGE_PREFIX, AUDITOR_PREFIX = "judge_", "auditor_"
SUMMARIES = ("analysis/kbv_summary.csv", "kbv_summary.csv")


def release_layout(folder: str | Path) -> ReleaseLayout:
    """Which files of ``folder`` the reader reads: the paper's naming when ``scores/`` holds a
    ``judge_*.jsonl``, else ours. A missing subfolder contributes nothing (the reader names it)."""
    root = Path(folder)

    def glob(sub: str, pattern: str) -> tuple[str, ...]:
        return tuple(sorted(str(p) for p in (root / sub).glob(pattern) if p.is_file()))

    scores = glob("scores", "*.jsonl")
    judge = glob("scores", f"{JUDGE_PREFIX}*.jsonl")
    naming = "paper" if judge else "harness"
    auditor = glob("scores", f"{AUDITOR_PREFIX}*.jsonl") if judge else ()
    if not judge:
        judge = scores
    read = set(judge) | set(auditor)
    return ReleaseLayout(naming=naming, briefs=glob("briefs", "*.yaml"), transcripts=glob("transcripts", "*.jsonl"),
                         judge=judge, auditor=auditor,
                         summaries=tuple(str(root / s) for s in SUMMARIES if (root / s).is_file()),
                         ignored=tuple(f for f in scores if f not in read))


def release_files(folder: str) -> list[str]:
    """The files of a released folder that its reader reads (the inputs of driftbench_release, so that
    editing one rebuilds what reads the release); none when the folder is missing, which the reader names."""
    return release_layout(folder).files() if Path(folder).is_dir() else []


def model_names(cfg: dict) -> list[str]:
    return [m["name"] for m in cfg["models"]]


def model_spec(cfg: dict, name: str) -> dict[str, Any]:
    for m in cfg["models"]:
        if m["name"] == name:
            return dict(m)
    raise ValueError(f"driftbench: no model {name!r} in the preset's models ({', '.join(model_names(cfg))})")


def _local_weights(llm: dict) -> list[str]:
    if llm.get("backend", "local") == "local" and "/" not in llm.get("model", "smollm2-135m"):
        return [PRETRAINED_INPUT.format(name=llm.get("model", "smollm2-135m"))]
    return []


def model_input(cfg: dict, name: str) -> list[str]:
    """Files a run waits for: the cached weights of a local registered model (none for scripted agents)."""
    spec = model_spec(cfg, name)
    return _local_weights(spec["llm"]) if spec["kind"] == "lm" else []


def judge_input(cfg: dict) -> list[str]:
    return _local_weights(cfg["judge"]["llm"]) if cfg["judge"]["kind"] == "model" else []


def run_config(cfg: dict, name: str) -> dict[str, Any]:
    return {"model": model_spec(cfg, name), "briefs": cfg["briefs"], "repetitions": cfg["repetitions"],
            "generation": cfg["generation"]}


def judge_config(cfg: dict) -> dict[str, Any]:
    return {"briefs": cfg["briefs"], "judge": cfg["judge"]}


def transcript_targets(cfg: dict, prefix: str = "results/driftbench/transcripts") -> list[str]:
    return [f"{prefix}/{m}/{c}.jsonl" for m in model_names(cfg) for c in CONDITIONS]


def score_targets(cfg: dict) -> list[str]:
    return transcript_targets(cfg, "results/driftbench/scores")


def aggregate_input(cfg: dict, source: str) -> dict[str, Any]:
    """What the aggregate step reads: the release (source: remote) or every run's transcripts and scores."""
    if source == "remote":
        return {"release": RELEASE}
    return {"transcripts": transcript_targets(cfg), "scores": score_targets(cfg)}


def under_test(cfg: dict) -> list[str]:
    """Models whose numbers the claims read (scripted reference agents are planted checks)."""
    return [m["name"] for m in cfg["models"] if m.get("under_test", True)]


def check_preset(cfg: dict, where: str) -> None:
    """Refuse values the schema cannot express, naming the key (``where`` is e.g. ``driftbench.small``)."""
    names = model_names(cfg)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"config: {where}.models names {dup} more than once")
    if not under_test(cfg):
        raise ValueError(f"config: {where}.models has no model under test (every one sets under_test: false)")
    for k, m in enumerate(cfg["models"]):
        if m["kind"] == "scripted" and "profile" not in m:
            raise ValueError(f"config: {where}.models[{k}] ({m['name']}): a scripted agent needs a profile")
        if m["kind"] == "lm" and "llm" not in m:
            raise ValueError(f"config: {where}.models[{k}] ({m['name']}): a language model needs an llm block")
    if cfg["briefs"] is not None and len(set(cfg["briefs"])) != len(cfg["briefs"]):
        raise ValueError(f"config: {where}.briefs lists a brief more than once")
