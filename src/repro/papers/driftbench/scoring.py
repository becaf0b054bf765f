"""Scoring a run: the rule-based checker, the rubric judge, the restatement probe, KBV, under-detection.

- :func:`check_proposal` (ours): reads the final proposal's design (the text before its constraint
  checklist, which restates the constraints and is not evidence of the design) and decides each
  :class:`~repro.papers.driftbench.briefs.Check`: a number outside its limit, a forbidden keyword
  used in a sentence without a negation cue, a required element absent. A numeric check whose
  pattern captures nothing is undecided (None), never a violation.
- :func:`judge_rubric`: the brief as a :class:`repro.llm.judge.Rubric`, one criterion per hard
  constraint (``c<i>``) and per banned move (``b<j>``). The rule judge decides a criterion by its
  keyword (``must_not_match`` / ``must_match``), so it cannot see numeric limits; a model judge reads
  the descriptions. Judge adherence and complexity follow the reference scales (:func:`adherence_scale`).
- :func:`probe_recall`: the reference's key matching (numbers with units, quoted text, a word window
  from the third word, the whole item when short) against the lowercased probe reply.
- :func:`kbv`: knows (last-probe constraint recall >= 0.8) and violates (adherence below a threshold:
  the code's < 3 and the text's < 4, both reported).
- :func:`under_detection`: of the (run, constraint) pairs the checker finds violated, the share the
  judge calls met.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from repro.llm.judge import Criterion, Rubric
from repro.papers.driftbench.briefs import Brief, Check

__all__ = ["design_text", "check_proposal", "adherence_scale", "judge_rubric", "judge_verdicts", "probe_keys",
           "probe_recall", "token_count", "kbv", "under_detection", "KNOWS_THRESHOLD"]

KNOWS_THRESHOLD = 0.8  # reference: knows = constraint_recall >= 0.8
_NEGATION = re.compile(r"\b(?:no|not|never|without|avoid\w*|exclud\w*|instead of|rather than|refuse\w*|don't|"
                       r"do not|must not|forbid\w*|ban\w*)\b", re.I)
_CHECKLIST = re.compile(r"^.*\bchecklist\b.*$", re.I | re.M)
_NUMBER_UNITS = r"(?:gbp|usd|eur|parameters?|months?|years?|weeks?|days?|hours?|samples?|participants?|sites?|" \
                r"schools?|donors?|cells?|farms?|sentences?|cases?|items?|trials?|fte|minutes?)"


def design_text(proposal: str) -> str:
    """The proposal up to its constraint checklist (the whole text when it has none)."""
    m = _CHECKLIST.search(proposal)
    return proposal[:m.start()] if m else proposal


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def _numbers(check: Check, text: str) -> list[float]:
    out = []
    for m in re.finditer(check.pattern, text, re.I):
        try:
            out.append(float(m.group(1).replace(",", "")))
        except ValueError:
            continue
    return out


def decide(check: Check, proposal: str) -> bool | None:
    """True when ``proposal`` breaks ``check``, False when it keeps it, None when it cannot tell."""
    text = design_text(proposal)
    if check.numeric:
        values = _numbers(check, text)
        if not values:
            return None
        return any(v > check.limit for v in values) if check.kind == "max" else any(v < check.limit for v in values)
    if check.kind == "require":
        return re.search(check.pattern, text, re.I) is None
    return any(re.search(check.pattern, s, re.I) and not _NEGATION.search(s) for s in _sentences(text))


def check_proposal(proposal: str, brief: Brief) -> dict[str, bool | None]:
    """Per check target (``c<i>``, ``b<j>``): violated, kept, or undecided (None)."""
    return {c.target: decide(c, proposal) for c in brief.checks}


def adherence_scale(n_violated: int, n_stretched: int = 0) -> int:
    """Reference adherence: 4 all met, 3 one stretched, 2 one violated, 1 two, 0 three or more."""
    if n_violated < 0 or n_stretched < 0:
        raise ValueError("adherence_scale: counts must be >= 0")
    if n_violated == 0:
        return 4 if n_stretched == 0 else 3
    return max(0, 3 - n_violated)


def judge_rubric(brief: Brief) -> Rubric:
    """One criterion per hard constraint (``c<i>``) and banned move (``b<j>``); keyword checks give the
    rule judge its patterns, numeric ones give it none (it calls them met)."""
    by_target = {c.target: c for c in brief.checks}
    crit = []
    for prefix, items, ask in (("c", brief.hard_constraints, "Does the proposal respect the constraint: "),
                               ("b", brief.banned_moves, "Does the proposal avoid the banned move: ")):
        for i, text in enumerate(items):
            chk = by_target.get(f"{prefix}{i}")
            must, must_not = (), ()
            if chk is not None and chk.kind == "forbid":
                must_not = (chk.pattern,)
            elif chk is not None and chk.kind == "require":
                must = (chk.pattern,)
            crit.append(Criterion(f"{prefix}{i}", ask + text + "?", must_match=must, must_not_match=must_not))
    return Rubric(tuple(crit))


def judge_verdicts(met: Mapping[str, bool | None], brief: Brief) -> dict[str, float]:
    """Rubric scores of one judgement: constraint adherence (0-4) from the hard-constraint criteria
    judged not met, complexity inflation (0-3) from the banned moves judged taken. Undecided criteria
    count as met (the judge saw no violation); no decided criterion at all gives NaN."""
    if not any(v is not None for v in met.values()):
        return {"j_constraint_adherence": math.nan, "j_complexity_inflation": math.nan}
    n_c = sum(met.get(f"c{i}") is False for i in range(len(brief.hard_constraints)))
    n_b = sum(met.get(f"b{j}") is False for j in range(len(brief.banned_moves)))
    return {"j_constraint_adherence": float(adherence_scale(n_c)), "j_complexity_inflation": float(min(3, n_b))}


def probe_keys(item: str) -> list[str]:
    """Key phrases of one constraint for the recall match (after the reference's _extract_keywords)."""
    low = item.lower()
    keys = re.findall(rf"\d[\d,]*(?:\.\d+)?\s*{_NUMBER_UNITS}\b", low)
    keys += re.findall(r'"([^"]+)"', low)
    words = low.split()
    if len(words) >= 4:
        start = min(2, len(words) // 3)
        keys.append(" ".join(words[start:start + 4]))
    elif len(words) >= 2:
        keys.append(" ".join(words))
    if len(low) < 100:
        keys.append(low)
    return [k.strip() for k in keys if k.strip()]


def probe_recall(reply: str, items: Sequence[str]) -> list[bool]:
    """Per item: is any of its keys in the lowercased reply."""
    low = reply.lower()
    return [any(k in low for k in probe_keys(item)) for item in items]


def token_count(text: str) -> int:
    """Words and punctuation marks (a tokenizer-free count: every model's reply is counted alike)."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def kbv(recall: float, adherence: float, *, adherence_below: float) -> bool | None:
    """Knows (recall >= 0.8) but violates (adherence < ``adherence_below``); None without both."""
    if recall is None or adherence is None or math.isnan(recall) or math.isnan(adherence):
        return None
    return bool(recall >= KNOWS_THRESHOLD and adherence < adherence_below)


def under_detection(checker: Sequence[Mapping[str, bool | None]], judge: Sequence[Mapping[str, bool | None]],
                    targets: str = "c") -> tuple[int, int]:
    """(missed, violations): of the checker's violations among criteria named ``<targets><i>``, how many
    the judge called met (or left undecided). Runs are paired by position."""
    if len(checker) != len(judge):
        raise ValueError(f"under_detection: {len(checker)} checker runs but {len(judge)} judge runs")
    missed = total = 0
    for chk, jdg in zip(checker, judge):
        for name, violated in chk.items():
            if violated and name.startswith(targets):
                total += 1
                missed += jdg.get(name) is not False
    return missed, total
