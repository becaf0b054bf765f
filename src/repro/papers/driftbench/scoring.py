"""Scoring a run: the rule-based checker, the rubric judge, the restatement probe, KBV, under-detection.

- :func:`check_proposal` (ours): reads the final proposal's design (the text before its constraint
  checklist, which restates the constraints and is not evidence of the design) and decides each
  :class:`~repro.papers.driftbench.briefs.Check`: a number outside its limit, a forbidden keyword
  used in a sentence without a negation or qualifier cue, a required element absent. A numeric check
  whose pattern captures nothing is undecided (None), never a violation.
- :func:`stretched_checks` (ours): the constraints that are kept but, in the reference rubric's words
  (adherence 3), "stretched or ambiguously handled": a numeric limit met only at its edge (a stated
  number equal to the limit, none beyond it: the reference's calibration example scores 40
  participants under a 40-participant cap as a 3), a forbidden item named in a sentence that
  qualifies it instead of refusing it ("optionally", "if needed", "could", "a pilot of", ...), a
  required element named only in such sentences (or refused). Sentences and cues are one definition
  (:func:`sentence_pattern`) shared by the checker and the rule judge.
- :func:`judge_rubric`: the brief as a :class:`repro.llm.judge.Rubric`, one criterion per hard
  constraint (``c<i>``: violated or not), one per hard constraint asking whether it is kept without
  being stretched (``s<i>``), and one per banned move (``b<j>``). The rule judge decides a criterion
  by the sentence patterns of its keyword (``must_not_match`` / ``must_match``), so it reads negation
  and qualifier cues as the checker does but cannot see numeric limits (it calls a numeric
  constraint met and unstretched); a model judge reads the descriptions. Judge adherence and
  complexity follow the reference scales (:func:`adherence_scale`, with the ``s<i>`` criteria giving
  the stretched count, so the scale's 3 can occur).
- :func:`probe_recall`: the reference's key matching (numbers followed by one of the reference's
  units, quoted text, a word window from the third word, the whole item when short) against the
  lowercased probe reply.
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

__all__ = ["design_text", "check_proposal", "stretched_checks", "checker_adherence", "sentence_pattern",
           "adherence_scale", "judge_rubric", "judge_verdicts", "probe_keys", "probe_recall", "token_count", "kbv",
           "under_detection", "KNOWS_THRESHOLD"]

KNOWS_THRESHOLD = 0.8  # reference: knows = constraint_recall >= 0.8
_NEGATION = (r"\b(?:no|not|never|without|avoid\w*|exclud\w*|instead of|rather than|refuse\w*|don't|do not|"
             r"must not|forbid\w*|ban\w*)\b")
#: a qualified mention: the item is named, neither adopted outright nor refused
_QUALIFIER = (r"\b(?:may|might|could|possibly|optional\w*|if (?:needed|necessary|feasible|possible|required|"
              r"budget allows|time permits)|where (?:feasible|possible|needed)|consider\w*|exploratory|pilot|"
              r"unless|except|partial\w*|limited)\b")
_CHECKLIST = re.compile(r"^.*\bchecklist\b.*$", re.I | re.M)
# the reference's _extract_keywords: a number, then (after optional spaces) one of these units with an
# optional plural s; no word boundary after the unit, so "3 monthly" keys as "3 month"
_NUMBER_UNITS = r"(?:gbp|usd|eur|parameter|month|year|week|day|hour|sample|example|language|dataset)s?"

# A sentence ends at . ! ? followed by white space (or the end), or at a line break: the checker's and
# the rule judge's reading of a sentence, as one regular expression.
_START = r"(?:^|(?<=[.!?])[ \t]+)"
_CHAR = r"(?:[^.!?\n]|[.!?](?!\s|$))"


def sentence_pattern(keyword: str, *, negated: bool | None = None, qualified: bool | None = None) -> str:
    """A regular expression (for ``re.I | re.M``) that finds ``keyword`` in one sentence, where the
    sentence has (True), lacks (False) or may have (None) a negation cue and a qualifier cue."""
    cond = ""
    for cue, want in ((_NEGATION, negated), (_QUALIFIER, qualified)):
        if want is not None:
            cond += f"(?{'=' if want else '!'}{_CHAR}*{cue})"
    return f"{_START}{cond}{_CHAR}*?(?:{keyword})"


def design_text(proposal: str) -> str:
    """The proposal up to its constraint checklist (the whole text when it has none)."""
    m = _CHECKLIST.search(proposal)
    return proposal[:m.start()] if m else proposal


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
    return _found(_plain(check.pattern), text)


def _found(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.I | re.M) is not None


def _plain(keyword: str) -> str:
    """``keyword`` in a sentence with neither a negation nor a qualifier cue: used outright."""
    return sentence_pattern(keyword, negated=False, qualified=False)


def _hedged(keyword: str) -> str:
    """``keyword`` in a sentence that qualifies it without refusing it."""
    return sentence_pattern(keyword, negated=False, qualified=True)


def stretch(check: Check, proposal: str) -> bool:
    """Is ``check`` stretched or ambiguously handled in ``proposal`` (meaningful when it is not
    violated): a number at the limit, a forbidden item qualified, a required one never stated plainly."""
    text = design_text(proposal)
    if check.numeric:
        return any(v == check.limit for v in _numbers(check, text))
    if check.kind == "require":
        return _found(check.pattern, text) and not _found(_plain(check.pattern), text)
    return _found(_hedged(check.pattern), text)


def check_proposal(proposal: str, brief: Brief) -> dict[str, bool | None]:
    """Per check target (``c<i>``, ``b<j>``): violated, kept, or undecided (None)."""
    return {c.target: decide(c, proposal) for c in brief.checks}


def stretched_checks(proposal: str, brief: Brief) -> set[str]:
    """Hard-constraint targets (``c<i>``) kept but stretched (see :func:`stretch`)."""
    return {c.target for c in brief.constraint_checks() if decide(c, proposal) is not True and stretch(c, proposal)}


def checker_adherence(proposal: str, brief: Brief) -> float:
    """The checker's adherence on the reference scale: violated and stretched hard constraints."""
    if not brief.constraint_checks():
        return math.nan
    n_viol = sum(bool(v) for k, v in check_proposal(proposal, brief).items() if k.startswith("c"))
    return float(adherence_scale(n_viol, len(stretched_checks(proposal, brief))))


def adherence_scale(n_violated: int, n_stretched: int = 0) -> int:
    """Reference adherence: 4 all met, 3 one stretched, 2 one violated, 1 two, 0 three or more."""
    if n_violated < 0 or n_stretched < 0:
        raise ValueError("adherence_scale: counts must be >= 0")
    if n_violated == 0:
        return 4 if n_stretched == 0 else 3
    return max(0, 3 - n_violated)


def judge_rubric(brief: Brief) -> Rubric:
    """Per hard constraint a criterion ``c<i>`` (respected at all) and ``s<i>`` (respected without being
    stretched), per banned move ``b<j>``. Keyword checks give the rule judge sentence patterns (a
    forbidden item used outright breaks ``c``, one named with a qualifier breaks ``s``; a required one
    absent breaks ``c``, one never stated plainly breaks ``s``); numeric ones give it none (it calls
    them met and unstretched)."""
    by_target = {c.target: c for c in brief.checks}
    crit = []
    for i, text in enumerate(brief.hard_constraints):
        chk = by_target.get(f"c{i}")
        c_must = c_not = s_must = s_not = ()
        if chk is not None and chk.kind == "forbid":
            c_not, s_not = (_plain(chk.pattern),), (_hedged(chk.pattern),)
        elif chk is not None and chk.kind == "require":
            c_must, s_must = (chk.pattern,), (_plain(chk.pattern),)
        crit.append(Criterion(f"c{i}", f"Does the proposal respect the constraint: {text}?", must_match=c_must,
                              must_not_match=c_not))
        crit.append(Criterion(f"s{i}", f"Does the proposal respect the constraint fully and explicitly, not only at "
                                       f"its limit and not ambiguously: {text}?", must_match=s_must,
                              must_not_match=s_not))
    for j, text in enumerate(brief.banned_moves):
        chk = by_target.get(f"b{j}")
        crit.append(Criterion(f"b{j}", f"Does the proposal avoid the banned move: {text}?",
                              must_not_match=(chk.pattern,) if chk is not None else ()))
    return Rubric(tuple(crit))


def judge_verdicts(met: Mapping[str, bool | None], brief: Brief) -> dict[str, float]:
    """Rubric scores of one judgement: constraint adherence (0-4) from the hard-constraint criteria
    judged not met (``c<i>``) and, among the others, those judged stretched (``s<i>``); complexity
    inflation (0-3) from the banned moves judged taken. Undecided criteria count as met (the judge saw
    no violation); no decided criterion at all gives NaN."""
    if not any(v is not None for v in met.values()):
        return {"j_constraint_adherence": math.nan, "j_complexity_inflation": math.nan}
    n = range(len(brief.hard_constraints))
    n_c = sum(met.get(f"c{i}") is False for i in n)
    n_s = sum(met.get(f"c{i}") is not False and met.get(f"s{i}") is False for i in n)
    n_b = sum(met.get(f"b{j}") is False for j in range(len(brief.banned_moves)))
    return {"j_constraint_adherence": float(adherence_scale(n_c, n_s)), "j_complexity_inflation": float(min(3, n_b))}


def probe_keys(item: str) -> list[str]:
    """Key phrases of one constraint for the recall match (after the reference's _extract_keywords)."""
    low = item.lower()
    keys = re.findall(rf"\d[\d,]*(?:\.\d+)?\s*{_NUMBER_UNITS}", low)
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
