"""Judges: score model responses against a rubric, by rules (default) or by a backend model.

A :class:`Rubric` is a list of weighted :class:`Criterion`; each criterion is met or not, and a
response's score is the weighted share of the criteria met (in [0, 1]).

- :class:`RuleJudge` decides each criterion with regular expressions (all of ``must_match`` found,
  none of ``must_not_match``), case-insensitively. Deterministic; the default.
- :class:`ModelJudge` asks any :class:`repro.llm.base.LanguageModel` (local or HTTP) to answer
  ``<criterion>: yes|no`` for each criterion, greedily, and parses the lines. A criterion the reply
  does not decide is left out of that response's score; if none is decided the score is NaN and
  ``parsed`` is False, never a guess.

A judge is an instrument, so its agreement with planted labels is measured (:func:`agreement`),
never assumed: a paper reports the judge's accuracy and Cohen's kappa on items whose label it
planted, beside the scores.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from repro.llm.base import LanguageModel
from repro.registry import Registry

__all__ = ["Criterion", "Rubric", "Judgement", "Judge", "RuleJudge", "ModelJudge", "JUDGES", "create_judge",
           "agreement"]


@dataclass(frozen=True)
class Criterion:
    """One yes/no question about a response."""

    name: str
    """short identifier (letters, digits, _ and -), used in the judge model's answer lines"""
    description: str = ""
    """the question, as the judge model reads it"""
    weight: float = 1.0
    must_match: tuple[str, ...] = ()
    """regular expressions that must all be found (rule judge)"""
    must_not_match: tuple[str, ...] = ()
    """regular expressions none of which may be found (rule judge)"""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", self.name):
            raise ValueError(f"criterion name {self.name!r}: use letters, digits, _ and - only")
        if self.weight <= 0:
            raise ValueError(f"criterion {self.name}: weight must be > 0, got {self.weight}")
        for pattern in (*self.must_match, *self.must_not_match):
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"criterion {self.name}: bad regular expression {pattern!r}: {err}") from None


@dataclass(frozen=True)
class Rubric:
    criteria: tuple[Criterion, ...]

    @classmethod
    def from_list(cls, items: Sequence[Mapping | Criterion]) -> "Rubric":
        """From config.yaml: a list of ``{name, description, weight, must_match, must_not_match}``."""
        crit = []
        for i, item in enumerate(items):
            if isinstance(item, Criterion):
                crit.append(item)
                continue
            from repro.config import from_dict

            item = dict(item)
            for key in ("must_match", "must_not_match"):
                if key in item:
                    item[key] = tuple(item[key])
            crit.append(from_dict(Criterion, item, f"rubric[{i}]"))
        if not crit:
            raise ValueError("a rubric needs at least one criterion")
        names = [c.name for c in crit]
        if len(set(names)) != len(names):
            raise ValueError(f"rubric criteria names repeat: {names}")
        return cls(tuple(crit))


@dataclass(frozen=True)
class Judgement:
    score: float
    """weighted share of decided criteria met, in [0, 1]; NaN if none was decided"""
    met: dict[str, bool | None] = field(default_factory=dict)
    """per criterion: met, not met, or None (undecided)"""
    parsed: bool = True
    """False when the judge could not decide any criterion"""
    raw: str = ""
    """the judge model's reply (empty for the rule judge)"""


def _score(rubric: Rubric, met: dict[str, bool | None]) -> float:
    decided = [c for c in rubric.criteria if met.get(c.name) is not None]
    if not decided:
        return math.nan
    return sum(c.weight for c in decided if met[c.name]) / sum(c.weight for c in decided)


class Judge:
    """``score(responses, prompts=None) -> list[Judgement]``."""

    rubric: Rubric

    def score(self, responses: Sequence[str], prompts: Sequence[str] | None = None) -> list[Judgement]:
        raise NotImplementedError


JUDGES: Registry = Registry("judge")


@JUDGES.register("rules")
class RuleJudge(Judge):
    """Decides every criterion with its regular expressions (case-insensitive, multi-line)."""

    def __init__(self, rubric: Rubric) -> None:
        self.rubric = rubric

    def score(self, responses, prompts=None):
        out = []
        for text in responses:
            met = {c.name: all(re.search(p, text, re.I | re.M) for p in c.must_match)
                   and not any(re.search(p, text, re.I | re.M) for p in c.must_not_match)
                   for c in self.rubric.criteria}
            out.append(Judgement(_score(self.rubric, met), met))
        return out


_SYSTEM = ("You grade a response against a rubric. For each criterion, answer on its own line "
           "exactly as `name: yes` or `name: no`. Write nothing else.")


@JUDGES.register("model")
class ModelJudge(Judge):
    """Asks ``model`` to decide each criterion (greedy decoding, so deterministic for a local model)."""

    def __init__(self, rubric: Rubric, model: LanguageModel, *, max_new_tokens: int = 64) -> None:
        self.rubric = rubric
        self.model = model
        self.max_new_tokens = max_new_tokens

    def prompt(self, response: str, prompt: str | None = None) -> list[dict]:
        lines = [f"- {c.name}: {c.description or c.name}" for c in self.rubric.criteria]
        task = f"Task given to the model:\n{prompt}\n\n" if prompt else ""
        user = (f"{task}Response to grade:\n<<<\n{response}\n>>>\n\nRubric:\n" + "\n".join(lines)
                + "\n\nAnswer each criterion as `name: yes` or `name: no`.")
        return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]

    def parse(self, reply: str) -> dict[str, bool | None]:
        met: dict[str, bool | None] = {c.name: None for c in self.rubric.criteria}
        for c in self.rubric.criteria:
            found = re.findall(rf"^[\s*`-]*{re.escape(c.name)}[`*\s]*[:=-]\s*[`*]*\s*(yes|no)\b", reply, re.I | re.M)
            if found:
                met[c.name] = found[-1].lower() == "yes"
        return met

    def score(self, responses, prompts=None):
        responses = list(responses)
        prompts = list(prompts) if prompts is not None else [None] * len(responses)
        if len(prompts) != len(responses):
            raise ValueError(f"judge: {len(responses)} responses but {len(prompts)} prompts")
        convs = [self.prompt(r, p) for r, p in zip(responses, prompts)]
        replies = self.model.chat(convs, max_new_tokens=self.max_new_tokens, temperature=0.0) if convs else []
        out = []
        for reply in replies:
            met = self.parse(reply)
            parsed = any(v is not None for v in met.values())
            out.append(Judgement(_score(self.rubric, met), met, parsed, reply))
        return out


def create_judge(kind: str, rubric: Rubric | Sequence[Mapping], **kwargs) -> Judge:
    """``create_judge("rules", rubric)`` or ``create_judge("model", rubric, model=m)``."""
    if not isinstance(rubric, Rubric):
        rubric = Rubric.from_list(rubric)
    return JUDGES.create(kind, rubric=rubric, **kwargs)


def agreement(scores: Sequence[float], planted: Sequence[bool], *, threshold: float = 0.5) -> dict[str, float]:
    """Agreement of judge scores (``score >= threshold`` means positive) with planted binary labels.

    Returns accuracy and Cohen's kappa (Cohen 1960) over the items the judge scored, the number of
    items, and the share it left unscored (NaN scores).
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(planted, dtype=bool)
    if s.shape != y.shape:
        raise ValueError(f"agreement: {s.size} scores but {y.size} planted labels")
    ok = ~np.isnan(s)
    pred, truth = s[ok] >= threshold, y[ok]
    n = int(ok.sum())
    if n == 0:
        return {"n": 0, "unscored": 1.0 if s.size else 0.0, "accuracy": math.nan, "kappa": math.nan}
    p_o = float(np.mean(pred == truth))
    p_e = float(np.mean(pred) * np.mean(truth) + np.mean(~pred) * np.mean(~truth))
    kappa = (p_o - p_e) / (1 - p_e) if p_e < 1 else (1.0 if p_o == 1 else math.nan)
    return {"n": n, "unscored": float(1 - n / s.size), "accuracy": p_o, "kappa": kappa}
