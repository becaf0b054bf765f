"""toolgap's data: arithmetic families and a generated knowledge base, their tool-call syntax, the
training corpus of the tiny models, and the TruthfulQA loader (the real path).

Ground truth planted here
-------------------------
- Arithmetic: each family (``add1`` = one-digit sums ... ``mul33`` = three-digit products) has a
  fixed pool of expressions; a ``seen_fraction`` of each pool is in the tiny models' corpus with its
  answer. Whether a model solves an item without the tool depends on its width (how much it
  memorises or generalises): the capability boundary differs by model, as in the paper.
- Knowledge base: invented entities (names no pretrained model has seen) with invented attribute
  values. Facts of *seen* entities are in the corpus; facts of unseen entities never are, so no
  model can know them: an unseen-entity question needs the tool for every model, by construction.
- Tool use is taught by demonstrations from a teacher that does not know what the student knows:
  it calls the calculator for the families in ``tool_families`` and the lookup for the attributes
  in ``tool_attributes``, whatever the student has memorised. Behaviour therefore follows surface
  features of the question, necessity follows the model's knowledge: the knowing-doing gap.
- Answers are checked against the generator's own answers (:func:`is_correct`).

The tool-call syntax is ``<call>calc(EXPR)</call>`` and ``<call>lookup(ENTITY, ATTRIBUTE)</call>``;
:func:`detect_call` finds a call by text match (the tool's name followed by an opening bracket).
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

__all__ = ["FAMILIES", "ATTRIBUTES", "TOOLS", "Item", "arithmetic_items", "knowledge_items", "corpus",
           "detect_call", "extract_answer", "is_correct", "plain_prompt", "load_truthfulqa", "TRUTHFULQA_COLUMNS"]

#: Arithmetic families, easiest first: name -> (operand ranges, template). The reference's 13
#: families (long single-digit chains, 3x3-digit products, mod, parentheses, mixed precedence) at
#: byte-level-model scale.
FAMILIES = {
    "add1": (((0, 9), (0, 9)), "{0}+{1}"),
    "sub1": (((5, 9), (0, 5)), "{0}-{1}"),
    "mul1": (((2, 9), (2, 9)), "{0}*{1}"),
    "chain": (((1, 9),) * 4, "{0}+{1}+{2}+{3}"),
    "paren": (((1, 9), (1, 9), (2, 9)), "({0}+{1})*{2}"),
    "mixed": (((1, 9), (2, 9), (2, 9)), "{0}+{1}*{2}"),
    "mod": (((10, 99), (2, 9)), "{0}%{1}"),
    "add2": (((10, 99), (10, 99)), "{0}+{1}"),
    "mul21": (((10, 99), (2, 9)), "{0}*{1}"),
    "mul22": (((10, 99), (10, 99)), "{0}*{1}"),
    "mul33": (((100, 999), (100, 999)), "{0}*{1}"),
}

#: Knowledge-base attributes: name -> (question template, value generator key).
ATTRIBUTES = {"capital": "What is the capital of {e}?", "river": "What river flows through {e}?",
              "founder": "Who founded {e}?", "year": "In which year was {e} founded?"}

#: Tool of each task and its call syntax.
TOOLS = {"arithmetic": "calc", "knowledge": "lookup", "truthfulqa": "web_search"}

_SYLLABLES = ["ka", "lo", "mi", "ru", "ten", "vor", "zan", "bel", "qui", "dor", "fes", "nim", "pra", "sul", "tho", "gri"]
_CALL = re.compile(r"\b(calc|lookup|web_search)\s*\(", re.IGNORECASE)
_INT = re.compile(r"-?\d+")
_UNFINISHED = re.compile(r"[-+*/%×=:(]\s*$")


@dataclass(frozen=True)
class Item:
    """One question. ``seen``: its answer is in the tiny models' corpus. ``group``: the family or attribute."""

    id: str
    task: str
    group: str
    question: str
    answer: str
    seen: bool
    call: str
    """the call the teacher demonstrates, e.g. ``calc(3+4)``"""

    def to_dict(self) -> dict:
        return asdict(self)


def _pool(family: str, size: int, rng: np.random.Generator) -> list[tuple[str, int]]:
    """Up to ``size`` distinct (expression, value) pairs of ``family`` (all of them when fewer exist)."""
    ranges, template = FAMILIES[family]
    space = int(np.prod([hi - lo + 1 for lo, hi in ranges]))
    if space <= 4 * size:
        tuples = list(itertools.product(*[range(lo, hi + 1) for lo, hi in ranges]))
        picks = [tuples[i] for i in rng.permutation(len(tuples))[:size]]
    else:
        found: dict[tuple, None] = {}
        while len(found) < size:
            found[tuple(int(rng.integers(lo, hi + 1)) for lo, hi in ranges)] = None
        picks = list(found)
    out = []
    for ops in picks:
        expr = template.format(*ops)
        out.append((expr, int(eval(expr))))  # our own template of integers and + - * % ( )
    return out


def arithmetic_items(families: Sequence[str], *, pool_size: int, seen_fraction: float, tool_families: Sequence[str],
                     seed: int) -> list[Item]:
    """Every expression of each family's pool, the first ``seen_fraction`` of each marked seen."""
    unknown = sorted(set(families) - set(FAMILIES)) + sorted(set(tool_families) - set(FAMILIES))
    if unknown:
        raise ValueError(f"unknown arithmetic families {unknown}; known: {', '.join(FAMILIES)}")
    rng = np.random.default_rng(seed)
    items = []
    for fam in families:
        pool = _pool(fam, pool_size, rng)
        n_seen = int(round(seen_fraction * len(pool)))
        for k, (expr, value) in enumerate(pool):
            items.append(Item(f"{fam}-{k}", "arithmetic", fam, f"What is {expr}?", str(value), k < n_seen,
                              f"calc({expr})"))
    return items


def _name(rng: np.random.Generator, parts: int) -> str:
    return "".join(_SYLLABLES[i] for i in rng.integers(len(_SYLLABLES), size=parts)).capitalize()


def knowledge_items(n_entities: int, *, attributes: Sequence[str], seen_fraction: float, seed: int) -> list[Item]:
    """Questions about ``n_entities`` invented places; the first ``seen_fraction`` of them are seen."""
    unknown = sorted(set(attributes) - set(ATTRIBUTES))
    if unknown:
        raise ValueError(f"unknown knowledge attributes {unknown}; known: {', '.join(ATTRIBUTES)}")
    rng = np.random.default_rng(seed)
    names: dict[str, None] = {}
    while len(names) < n_entities:
        names[_name(rng, 3)] = None
    n_seen = int(round(seen_fraction * n_entities))
    items = []
    for k, entity in enumerate(names):
        values = {"capital": _name(rng, 2), "river": _name(rng, 2), "founder": _name(rng, 2),
                  "year": str(int(rng.integers(1100, 1999)))}
        for attr in attributes:
            items.append(Item(f"{attr}-{k}", "knowledge", attr, ATTRIBUTES[attr].format(e=entity), values[attr],
                              k < n_seen, f"lookup({entity}, {attr})"))
    return items


def plain_prompt(question: str, tool: str | None) -> str:
    """The tiny models' prompt: the question, and above it the available tool if there is one."""
    return (f"Tools: {tool}\n" if tool else "") + f"Q: {question}\nA: "


def corpus(items: Sequence[Item], *, tool_families: Sequence[str], tool_attributes: Sequence[str],
           repeats: int) -> list[str]:
    """The tiny models' training documents: each seen item without the tool (its answer), and with
    the tool as the teacher demonstrates it (a call for tool families/attributes, else the answer)."""
    docs = []
    calls = set(tool_families) | set(tool_attributes)
    for it in items:
        if not it.seen:
            continue
        tool = TOOLS[it.task]
        docs.append(plain_prompt(it.question, None) + it.answer)
        reply = f"<call>{it.call}</call>" if it.group in calls else it.answer
        docs.append(plain_prompt(it.question, tool) + reply)
    if not docs:
        raise ValueError("the tiny models' corpus is empty: no item is seen (seen_fraction 0?)")
    return docs * repeats


def detect_call(text: str, tool: str | None = None) -> bool:
    """Whether ``text`` holds a tool call: a tool's name followed by ``(`` (optionally in ``<call>`` tags).

    ``tool`` restricts the match to that tool's name.
    """
    hits = [m.group(1).lower() for m in _CALL.finditer(text)]
    return bool(hits) if tool is None else tool.lower() in hits


def extract_answer(text: str, task: str) -> str:
    """The answer a reply gives: for arithmetic the last integer of its first line (a reply that
    restates the expression, "47*38 = 1786", answers 1786), otherwise its first line.

    An arithmetic line that ends on an operator, ``=`` or ``:`` was cut before its result ("To solve
    this, add 7 and 6: ", "7 + 6 ="): it gives no answer, even if an operand equals the result.
    """
    if task == "arithmetic":
        first = text.strip().splitlines()[0] if text.strip() else ""
        if _UNFINISHED.search(first):
            return ""
        found = _INT.findall(first)
        return found[-1] if found else ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line.strip().rstrip(".").strip()


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", text.lower()).strip()


def is_correct(reply: str, answers: str | Sequence[str], task: str) -> bool:
    """Whether ``reply`` answers correctly without a tool (a reply that calls a tool is wrong).

    Arithmetic: the last integer of the first line equals the answer. Otherwise: some reference answer, normalised
    (lower case, letters, digits and spaces), occurs in the reply's first line.
    """
    if detect_call(reply):
        return False
    refs = [answers] if isinstance(answers, str) else list(answers)
    got = extract_answer(reply, task)
    if task == "arithmetic":
        return got != "" and got in refs
    got = _norm(got)
    return bool(got) and any(_norm(r) and _norm(r) in got for r in refs)


# ----------------------------------------------------------------------------------------------
# The real path: TruthfulQA's generation questions (Lin et al. 2022), a user-supplied CSV
# ----------------------------------------------------------------------------------------------

#: Columns of TruthfulQA.csv (github.com/sylinrl/TruthfulQA) that the loader reads.
TRUTHFULQA_COLUMNS = ("Question", "Best Answer", "Correct Answers")


def load_truthfulqa(path: str | Path, *, limit: int | None = None) -> list[dict]:
    """TruthfulQA questions as ``{"id", "question", "answers"}`` (best answer first, then the correct
    answers of the ``;``-separated column).

    Raises ``ValueError`` naming the file and what is wrong (missing file, missing column, empty
    question or answer on a numbered row).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"TruthfulQA CSV {path} does not exist (toolgap.<scale>.truthfulqa.csv; source: local)")
    text = path.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in TRUTHFULQA_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; TruthfulQA.csv has {list(TRUTHFULQA_COLUMNS)}")
    out = []
    for row_no, row in enumerate(reader, start=2):
        question, best = (row.get("Question") or "").strip(), (row.get("Best Answer") or "").strip()
        if not question or not best:
            raise ValueError(f"{path}, row {row_no}: empty {'Question' if not question else 'Best Answer'}")
        extra = [a.strip() for a in (row.get("Correct Answers") or "").split(";") if a.strip()]
        out.append({"id": f"tqa-{row_no - 2}", "question": question, "answers": [best, *extra]})
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise ValueError(f"{path}: no questions")
    return out
