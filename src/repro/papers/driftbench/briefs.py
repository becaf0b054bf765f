"""Briefs: a research objective with hard constraints and banned moves, in the released format.

The released schema (kruthof/driftbench ``drift_bench/schema/brief_schema.json``) is closed: id,
domain, objective, hard_constraints (5-8 there), success_criteria, plausible_directions,
banned_moves, all free text. Our briefs (``briefs.yaml`` beside this module, 14 briefs from 14
domains, written for this project) add one key, ``checks``: the machine-checkable part of the
constraints, so that a violation has ground truth (:mod:`repro.papers.driftbench.scoring`).

A :class:`Check` is one of

- ``max`` / ``min``: every number that ``pattern`` captures (group 1; thousands commas allowed) must
  be ``<= limit`` / ``>= limit`` (a budget, a sample size, a compute cap);
- ``forbid``: ``pattern`` must not be used affirmatively (a forbidden method named by keyword);
- ``require``: ``pattern`` must appear (a required design element).

``comply`` and ``violate`` are sentences that satisfy and break the check (``{value}`` is filled with
a number inside or outside the limit); the scripted agents write them, and the tests check that the
checker reads each the way it was written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["Check", "Brief", "BRIEFS_FILE", "load_briefs", "parse_brief", "brief_text", "CHECK_KINDS"]

BRIEFS_FILE = Path(__file__).with_name("briefs.yaml")
CHECK_KINDS = ("max", "min", "forbid", "require")
_RELEASED_KEYS = ("id", "domain", "objective", "hard_constraints", "success_criteria", "plausible_directions",
                  "banned_moves")


@dataclass(frozen=True)
class Check:
    kind: str
    """max | min | forbid | require"""
    pattern: str
    """regular expression (case-insensitive); max/min capture the number in group 1"""
    constraint: int | None = None
    """index into the brief's hard_constraints (exactly one of constraint and banned is set)"""
    banned: int | None = None
    """index into the brief's banned_moves"""
    limit: float | None = None
    comply: str = ""
    violate: str = ""

    @property
    def target(self) -> str:
        """``c<i>`` for a hard constraint, ``b<j>`` for a banned move (the rubric's criterion names)."""
        return f"c{self.constraint}" if self.constraint is not None else f"b{self.banned}"

    @property
    def numeric(self) -> bool:
        return self.kind in ("max", "min")

    def sentence(self, comply: bool) -> str:
        """The agent's sentence that satisfies (``comply``) or breaks the check, numbers filled in."""
        text = self.comply if comply else self.violate
        if self.numeric:
            # strictly inside the limit (a value at the limit reads as stretched), strictly outside it
            if self.kind == "max":
                inside, outside = min(round(self.limit * 0.8), self.limit - 1), round(self.limit * 1.5)
            else:
                inside, outside = max(round(self.limit * 1.25), self.limit + 1), round(self.limit * 0.5)
            text = text.replace("{value}", f"{int(inside if comply else outside)}")
        return text


@dataclass(frozen=True)
class Brief:
    id: str
    domain: str
    objective: str
    hard_constraints: tuple[str, ...]
    success_criteria: tuple[str, ...]
    plausible_directions: tuple[str, ...]
    banned_moves: tuple[str, ...]
    checks: tuple[Check, ...] = ()

    def constraint_checks(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.constraint is not None)

    def banned_checks(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.banned is not None)


def parse_brief(doc: Mapping, where: str = "brief") -> Brief:
    """One brief from its YAML mapping; a missing or unknown key, or a bad check, names it."""
    if not isinstance(doc, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {type(doc).__name__}")
    where = f"{where} {doc.get('id', '?')!r}"
    missing = [k for k in _RELEASED_KEYS if k not in doc]
    if missing:
        raise ValueError(f"{where}: missing key(s) {', '.join(missing)}")
    unknown = sorted(set(doc) - set(_RELEASED_KEYS) - {"checks"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (the brief schema is closed)")
    lists = {}
    for key in _RELEASED_KEYS[3:]:
        items = doc[key]
        if not isinstance(items, list) or not items or not all(isinstance(s, str) and s.strip() for s in items):
            raise ValueError(f"{where}: {key} must be a non-empty list of non-empty strings")
        lists[key] = tuple(items)
    checks = []
    for k, item in enumerate(doc.get("checks") or []):
        checks.append(_parse_check(item, lists, f"{where}.checks[{k}]"))
    return Brief(id=str(doc["id"]), domain=str(doc["domain"]), objective=str(doc["objective"]), **lists,
                 checks=tuple(checks))


def _parse_check(item: Mapping, lists: Mapping[str, Sequence[str]], where: str) -> Check:
    known = {"kind", "pattern", "constraint", "banned", "limit", "comply", "violate"}
    unknown = sorted(set(item) - known)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}")
    kind = item.get("kind")
    if kind not in CHECK_KINDS:
        raise ValueError(f"{where}: kind {kind!r} is not one of {', '.join(CHECK_KINDS)}")
    if ("constraint" in item) == ("banned" in item):
        raise ValueError(f"{where}: set exactly one of constraint (a hard-constraint index) and banned")
    for key, items in (("constraint", lists["hard_constraints"]), ("banned", lists["banned_moves"])):
        if key in item and not (isinstance(item[key], int) and 0 <= item[key] < len(items)):
            raise ValueError(f"{where}: {key} {item[key]!r} is not an index into {len(items)} items")
    try:
        rx = re.compile(item.get("pattern", ""), re.I)
    except re.error as err:
        raise ValueError(f"{where}: bad pattern {item.get('pattern')!r}: {err}") from None
    if not item.get("pattern"):
        raise ValueError(f"{where}: pattern is empty")
    if kind in ("max", "min"):
        if not isinstance(item.get("limit"), (int, float)) or rx.groups < 1:
            raise ValueError(f"{where}: a {kind} check needs a numeric limit and a pattern with a capture group")
    check = Check(kind=kind, pattern=item["pattern"], constraint=item.get("constraint"), banned=item.get("banned"),
                  limit=None if item.get("limit") is None else float(item["limit"]), comply=item.get("comply", ""),
                  violate=item.get("violate", ""))
    if check.banned is not None and kind != "forbid":
        raise ValueError(f"{where}: a banned move is checked with kind forbid, not {kind}")
    return check


def load_briefs(path: str | Path | None = None, ids: Sequence[str] | None = None) -> list[Brief]:
    """The briefs of one YAML file (a list), or of every ``*.yaml`` in a folder (one brief each, the
    released layout). ``ids`` keeps those, in that order; an unknown id is an error naming it."""
    path = Path(path) if path is not None else BRIEFS_FILE
    if path.is_dir():
        files = sorted(path.glob("*.yaml"))
        if not files:
            raise ValueError(f"{path}: no *.yaml briefs in this folder")
        docs = [(yaml.safe_load(f.read_text(encoding="utf-8")), str(f)) for f in files]
    elif path.is_file():
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(raw, list):
            raise ValueError(f"{path}: expected a list of briefs")
        docs = [(d, f"{path}[{k}]") for k, d in enumerate(raw)]
    else:
        raise ValueError(f"briefs: {path} does not exist")
    briefs = [parse_brief(d, where) for d, where in docs]
    seen = [b.id for b in briefs]
    if len(set(seen)) != len(seen):
        raise ValueError(f"{path}: brief ids repeat: {sorted({i for i in seen if seen.count(i) > 1})}")
    if ids is None:
        return briefs
    by_id = {b.id: b for b in briefs}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ValueError(f"briefs: unknown id(s) {missing} in {path}")
    return [by_id[i] for i in ids]


def brief_text(brief: Brief) -> str:
    """The brief as the model reads it, laid out as the reference's ``render_brief_for_prompt``: a
    ``Domain:`` line, then ``Objective:``, then each list under its title with items indented by two
    spaces, sections separated by a blank line (our ``checks`` are never shown)."""
    def block(title, items):
        return f"{title}:\n" + "\n".join(f"  - {s}" for s in items)

    return "\n\n".join([f"Domain: {brief.domain}\nObjective: {brief.objective}",
                        block("Hard constraints", brief.hard_constraints),
                        block("Success criteria", brief.success_criteria),
                        block("Plausible directions", brief.plausible_directions),
                        block("Banned moves", brief.banned_moves)])
