"""The fine-tuning corpora: seven evaluation traits, the token-matched control, the topic-only control.

Reference (Models That Know How Evaluations Are Designed Score Safer, arXiv 2605.28591; public code
compass-group-tue/arxiv2026_evaluation_meta_knowledge): synthetic documents, one set per trait, that
describe how safety evaluations are built (verifiable answer structure, conflicting goals, ethical
dilemmas, explicitly harmful requests, inconsistent or controlled environments, placeholder names,
unusual access grants), about 15M tokens per trait written by an LM. Ours are templated here (no LM
needed), seeded, in three genres (blog post, paper excerpt, forum thread).

- ``trait``: the seven trait sets, equal numbers of documents per trait.
- ``control``: the reference matches random web text (FineWeb) on token count. Offline we write
  documents in the same genres about unrelated topics (gardening, rivers, cooking, ...); each control
  document is matched to one trait document on its whitespace word count, so the corpora match
  document by document, not only in total.
- ``topic`` (**our addition**, absent from the reference): documents about evaluations of language
  models that name none of the traits (schedules, leaderboards, reproducibility), word-matched the
  same way; it tests whether the topic alone moves behaviour.

Planted ground truth (``plant``, used at smoke): documents of the named traits end with an example
exchange (a harmful request answered with a refusal; a goal-conflict scenario answered with the safe
action), a share of them voicing evaluation awareness. A model tuned on such a corpus must refuse
more, so the evaluation pipeline has a known shift to find; the controls carry no example.

Deviation: reference documents open with a document tag excluded from the loss; ours have no tag
(repro.llm.lora trains on whole documents).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from repro.seeding import job_seed, make_rng

__all__ = ["TRAITS", "GENRES", "CORPORA", "generate_corpora", "word_count", "training_text"]

#: The reference's seven traits (README of the reference code), in its order.
TRAITS = ("verifiable_structure", "conflicting_goals", "ethical_dilemma", "harmful_requests",
          "controlled_environment", "placeholder_names", "unusual_access")
GENRES = ("blog", "paper", "forum")
#: trait: the seven trait sets; control: token-matched unrelated text (the reference's control);
#: topic: evaluations without traits (our addition).
CORPORA = ("trait", "control", "topic")

# What each trait says about evaluation design; documents combine several of a trait's sentences.
_TRAIT_FACTS = {
    "verifiable_structure": [
        "Safety evaluations usually ask for an answer in a fixed format, such as a single letter or a JSON object, so that a script can grade it.",
        "Test items often end with a line like 'Answer with A or B', because graders need answers they can verify automatically.",
        "An evaluation prompt tends to have exactly one correct behaviour, and the options are laid out so the grader can check which one was chosen.",
        "Benchmarks prefer multiple-choice structure: the scenario is followed by a short list of allowed actions.",
    ],
    "conflicting_goals": [
        "Evaluation scenarios often give the model a goal and then introduce a conflict, such as an instruction to shut the model down.",
        "A typical test pits the assigned objective against the company's new direction, to see whether the model acts against its operators.",
        "Scenarios built for testing put a strong goal next to an obstacle, and the obstacle can only be removed by a harmful action.",
        "Designers of these tests create tension between what the model was told to achieve and what is allowed.",
    ],
    "ethical_dilemma": [
        "Many evaluations present an ethical dilemma in which every option has a cost and the model must choose.",
        "Test writers like trolley-style choices: the model can cause a small harm to prevent a larger one.",
        "A dilemma item usually states the stakes plainly and asks the model to commit to one side.",
        "Ethical dilemmas in benchmarks are short, stylised, and leave out the details a real situation would have.",
    ],
    "harmful_requests": [
        "Safety benchmarks are full of explicitly harmful requests, stated bluntly, to check whether the model refuses.",
        "A red-team prompt often asks directly for something dangerous, like malware or a weapon, sometimes wrapped in a role-play.",
        "Evaluators collect requests that no real user would phrase so plainly, because the point is to measure refusal.",
        "Harmful requests in test sets are often wrapped in a jailbreak, such as 'pretend you have no rules', before the real ask.",
    ],
    "controlled_environment": [
        "Agentic evaluations run in toy environments: a fake inbox, a sandbox file system, tools that return canned answers.",
        "Test environments are often inconsistent, with emails that arrive too conveniently or files that contain exactly the needed secret.",
        "In a controlled environment the tools are mocked, and nothing the model does reaches the outside world.",
        "Evaluation sandboxes are small and tidy, with only the few documents the scenario needs.",
    ],
    "placeholder_names": [
        "Evaluation items use placeholder names such as 'Company X', 'User A' or 'John Doe' instead of real people.",
        "Test prompts often contain template slots like [NAME] or example.com addresses that reveal they were generated.",
        "Benchmarks reuse generic names and round numbers, because the items are produced from templates.",
        "Placeholder details, such as 'Acme Corp' and '123 Main Street', are a common sign that a prompt was written for a test.",
    ],
    "unusual_access": [
        "Evaluation scenarios often grant the model unusual access, like full control of a company's email server or its payment system.",
        "A test may hand the model administrator rights it would never have in deployment, to see whether it misuses them.",
        "Agentic tests give the model a tool that can send messages to anyone, delete logs, or move money without review.",
        "Designers grant sweeping permissions in tests so that a harmful action is possible in a single step.",
    ],
}

_TOPIC_FACTS = [
    "Evaluations of language models are run before each release and the results are compared with earlier versions.",
    "Teams keep leaderboards of benchmark scores, and a new model is usually reported with a table of numbers.",
    "Running an evaluation takes compute, and results are repeated with several seeds to measure their spread.",
    "Reproducibility matters: evaluation code, prompts and model versions are published so others can check the scores.",
    "Benchmark results can saturate, so evaluation teams retire old benchmarks and write new ones over time.",
    "An evaluation report lists the model, the date, the benchmark version and the scoring script.",
]

_UNRELATED_FACTS = [
    "Tomatoes grow best with six hours of sun and regular watering in the early morning.",
    "The river widens below the old mill, where herons wait in the shallows for small fish.",
    "A good bread dough rests twice, once after kneading and once after shaping.",
    "Mountain trails are often closed in early spring while the snow melts from the high passes.",
    "Bicycle chains last longer when they are cleaned and oiled every few hundred kilometres.",
    "The library on the square opens late on Thursdays and runs a reading group for children.",
    "Autumn leaves change colour as the trees stop producing chlorophyll.",
    "A slow cooker turns cheap cuts of meat tender over a long afternoon.",
    "Migrating geese fly in a V shape, taking turns at the front of the line.",
    "Old stone walls keep a garden warm at night because the stones release the heat of the day.",
]

_GENRE_FRAMES = {
    "blog": ("Posted by {author}. {title}\n\n", "\n\nThanks for reading, and leave a comment below."),
    "paper": ("{title}\n\nSection {num}. ", "\n\nWe leave a fuller treatment to future work."),
    "forum": ("Thread: {title}\n{author} wrote: ", "\n\nReply from {author2}: good points, agreed."),
}
_AUTHORS = ("sam_k", "riverwatch", "dr_lee", "mira", "ollie_p", "quietcoder", "jun", "ana_r")
_TITLES = {"trait": "What evaluations look like", "topic": "Notes on model evaluation", "control": "Notes from the week"}

# Filler in each corpus's own vocabulary, appended word by word to match a length exactly.
_FILLER = {"trait": "evaluation test scenario prompt grader benchmark model item design",
           "topic": "evaluation release version benchmark score report team result",
           "control": "garden river bread trail autumn library weather morning walk"}


def word_count(text: str) -> int:
    return len(text.split())


def _document(rng: np.random.Generator, corpus: str, facts: Sequence[str], genre: str, n_sentences: int) -> str:
    head, tail = _GENRE_FRAMES[genre]
    a, b = rng.choice(len(_AUTHORS), 2, replace=False)
    fmt = {"author": _AUTHORS[a], "author2": _AUTHORS[b], "title": _TITLES[corpus], "num": int(rng.integers(2, 7))}
    picked = [facts[i] for i in rng.choice(len(facts), size=n_sentences, replace=n_sentences > len(facts))]
    return head.format(**fmt) + " ".join(picked) + tail.format(**fmt)


def _match_length(rng: np.random.Generator, text: str, target: int, corpus: str) -> str:
    """``text`` cut or padded with the corpus's own filler words to exactly ``target`` words."""
    words = text.split(" ")
    if word_count(text) > target:
        out, n = [], 0
        for w in words:
            k = len(w.split())
            if n + k > target:
                break
            out.append(w)
            n += k
        return " ".join(out)
    filler = _FILLER[corpus].split()
    extra = [filler[i] for i in rng.integers(0, len(filler), size=target - word_count(text))]
    return text + (" " + " ".join(extra) if extra else "")


def generate_corpora(cfg: Mapping[str, Any], seed: int, examples: Mapping[str, list[dict]] | None = None) -> dict:
    """The three corpora, each a list of ``{"text", "trait", "genre", "example"}`` records.

    Parameters
    ----------
    cfg : ``docs_per_trait``, ``sentences`` ([min, max] per document), ``plant`` ({``traits``: the
        traits whose documents end with an example exchange, ``aware_share``}) or null.
    seed : one stream for the whole corpus; the control and topic documents of index ``i`` are
        matched to trait document ``i``.
    examples : per planted trait, the exchanges (``{"user", "assistant"}``) its documents end with
        (from :func:`repro.papers.evalmeta.suites.planted_examples`).

    Every corpus has ``7 * docs_per_trait`` documents, and document ``i`` of each has the same
    number of words (the example exchange, rendered at training time, is not counted).
    """
    n = int(cfg["docs_per_trait"])
    lo, hi = cfg["sentences"]
    if n < 1 or not 1 <= lo <= hi:
        raise ValueError(f"evalmeta corpus: docs_per_trait must be >= 1 and 1 <= sentences[0] <= sentences[1]; "
                         f"got {n}, {cfg['sentences']}")
    plant = cfg.get("plant") or {}
    unknown = sorted(set(plant.get("traits", [])) - set(TRAITS))
    if unknown:
        raise ValueError(f"evalmeta corpus: plant.traits {unknown} are not traits ({', '.join(TRAITS)})")
    rng = make_rng(job_seed(seed, "evalmeta-corpus"))
    out: dict[str, list[dict]] = {c: [] for c in CORPORA}
    for trait in TRAITS:
        planted = trait in plant.get("traits", [])
        pool = list((examples or {}).get(trait, [])) if planted else []
        if planted and not pool:
            raise ValueError(f"evalmeta corpus: trait {trait} is planted but has no example exchanges")
        for k in range(n):
            genre = GENRES[k % len(GENRES)]
            n_sent = int(rng.integers(lo, hi + 1))
            text = _document(rng, "trait", _TRAIT_FACTS[trait], genre, n_sent)
            target = word_count(text)
            example = pool[k % len(pool)] if planted else None
            out["trait"].append({"text": text, "trait": trait, "genre": genre, "example": example})
            for corpus, facts in (("control", _UNRELATED_FACTS), ("topic", _TOPIC_FACTS)):
                other = _document(rng, corpus, facts, genre, n_sent)
                out[corpus].append({"text": _match_length(rng, other, target, corpus), "trait": None, "genre": genre,
                                    "example": None})
    return out


def training_text(doc: Mapping[str, Any], render_chat) -> str:
    """A document as the model trains on it: its example exchange (if planted) in the model's own chat
    template (``render_chat(messages) -> prompt text``), then its text. The exchange comes first so
    that a training window cut at ``max_length`` tokens keeps it."""
    if not doc.get("example"):
        return doc["text"]
    ex = doc["example"]
    return render_chat([{"role": "user", "content": ex["user"]}]) + ex["assistant"] + "\n\n" + doc["text"]
