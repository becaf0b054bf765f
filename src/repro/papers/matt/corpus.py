"""Offline texts for matt and the evaluation items.

- English (the source tokenizer's and the tiny source model's language): the help topics of
  Python's standard library (``pydoc_data.topics``), split into paragraphs.
- Ukrainian (the language the source tokenizer covers poorly, as in the paper's headline case): the
  word lists of the ``faker`` package's ``uk_UA`` providers (lorem words, first names, last names),
  read from the installed package. Faker has no running Ukrainian prose, so documents are generated
  from those words: sentences drawn from a fixed random bigram chain over the lorem words (so the
  text has structure a model can learn beyond word frequencies), with names in some sentences.
  This is a stand-in for a real Ukrainian corpus (the paper uses web text), named as such.

Evaluation items, the same for the source and every target model:

- ``mc`` (discriminative, scored by log-probability): a context from the chain, then four
  candidate next words: a chain successor of the last word and three words that never follow it,
  drawn with the same word frequencies (so frequency and token count give no cue).
- ``gen`` (generative, greedy): a context, then the first half of a word whose prefix makes the
  completion unique in the word list; correct when the greedy continuation starts with the rest.
- ``heldout``: documents never seen in training, for bits per character.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["english_paragraphs", "ukrainian_words", "ukrainian_documents", "make_items", "build_data"]


def english_paragraphs(max_chars: int) -> list[str]:
    """Paragraphs of Python's help topics (ASCII English), up to ``max_chars`` characters in all."""
    from pydoc_data.topics import topics

    out, total = [], 0
    for key in sorted(topics):
        for para in re.split(r"\n\s*\n", topics[key]):
            para = " ".join(para.split())
            if len(para) < 40 or not para.isascii():
                continue
            out.append(para)
            total += len(para)
            if total >= max_chars:
                return out
    return out


def ukrainian_words() -> dict[str, list[str]]:
    """The ``faker`` ``uk_UA`` word lists: lorem words, first names, last names (deduplicated, in order)."""
    try:
        from faker.providers.lorem.uk_UA import Provider as Lorem
        from faker.providers.person.uk_UA import Provider as Person
    except ImportError:
        raise ValueError("matt needs the faker package for its Ukrainian words (pip install faker)") from None
    def unique(words):
        return list(dict.fromkeys(w for w in words if w.isalpha()))
    return {"lorem": unique(Lorem.word_list),
            "first": unique(list(Person.first_names_male) + list(Person.first_names_female)),
            "last": unique(Person.last_names)}


class _Chain:
    """A fixed random bigram chain over words: each word has ``fanout`` preferred successors."""

    def __init__(self, words: list[str], rng: np.random.Generator, fanout: int = 4) -> None:
        self.words = words
        n = len(words)
        zipf = 1.0 / np.arange(1, n + 1)
        self.start = zipf / zipf.sum()
        self.next = rng.choice(n, size=(n, fanout), p=self.start)

    def sentence(self, rng: np.random.Generator, length: int) -> list[str]:
        i = int(rng.choice(len(self.words), p=self.start))
        out = [i]
        for _ in range(length - 1):
            i = int(self.next[i, rng.integers(self.next.shape[1])]) if rng.random() < 0.8 else \
                int(rng.choice(len(self.words), p=self.start))
            out.append(i)
        return [self.words[k] for k in out]


def ukrainian_documents(n_docs: int, seed: int, words: dict[str, list[str]] | None = None,
                        sentences: tuple[int, int] = (2, 5)) -> list[str]:
    """``n_docs`` Ukrainian documents from the bigram chain (same seed -> same chain and documents)."""
    words = words or ukrainian_words()
    rng = np.random.default_rng(seed)
    chain = _Chain(words["lorem"], np.random.default_rng(12345))  # the language: fixed for every split
    docs = []
    for _ in range(n_docs):
        parts = []
        for _ in range(int(rng.integers(sentences[0], sentences[1] + 1))):
            s = chain.sentence(rng, int(rng.integers(4, 10)))
            if rng.random() < 0.3:
                s = [str(rng.choice(words["first"])), str(rng.choice(words["last"]))] + s
            text = " ".join(s)
            parts.append(text[0].upper() + text[1:] + ".")
        docs.append(" ".join(parts))
    return docs


def make_items(n_mc: int, n_gen: int, seed: int, words: dict[str, list[str]] | None = None) -> dict[str, list[dict]]:
    """Items from fresh sentences of the chain: the context ends with word w; ``mc`` offers one of w's
    chain successors and three lexicon words that never follow w; ``gen`` gives the first half of a
    successor whose prefix is unique in the lexicon."""
    words = words or ukrainian_words()
    lex = words["lorem"]
    index = {w: k for k, w in enumerate(lex)}
    chain = _Chain(lex, np.random.default_rng(12345))
    rng = np.random.default_rng(seed)
    mc, gen = [], []
    for _ in range(50 * (n_mc + n_gen)):
        if len(mc) >= n_mc and len(gen) >= n_gen:
            break
        context = chain.sentence(rng, int(rng.integers(3, 8)))
        succ = sorted(set(chain.next[index[context[-1]]].tolist()))
        answer = lex[int(rng.choice(succ))]
        text = " ".join(context)
        text = text[0].upper() + text[1:]
        if len(mc) < n_mc and (len(mc) <= len(gen) or len(gen) >= n_gen):
            others = np.array([k for k in range(len(lex)) if k not in succ])
            p = chain.start[others] / chain.start[others].sum()  # as frequent as successors are: no unigram cue
            wrong = [lex[k] for k in rng.choice(others, size=3, replace=False, p=p)]
            perm = rng.permutation(4)
            choices = [answer, *wrong]
            mc.append({"id": f"mc{len(mc)}", "context": text, "choices": [" " + choices[p] for p in perm],
                       "answer": int(np.argmax(perm == 0))})
        elif len(answer) >= 5:
            half = (len(answer) + 1) // 2
            if sum(w.startswith(answer[:half]) for w in lex) == 1:
                gen.append({"id": f"gen{len(gen)}", "prompt": f"{text} {answer[:half]}", "answer": answer[half:]})
    if len(mc) < n_mc or len(gen) < n_gen:
        raise ValueError(f"only {len(mc)} mc and {len(gen)} gen items; asked {n_mc} and {n_gen}")
    return {"mc": mc, "gen": gen}


def build_data(cfg: dict, seed: int) -> dict:
    """The corpora and items of one run: ``cfg`` has n_train, n_heldout, n_items_dev (documents for
    items), n_mc, n_gen, english_chars."""
    words = ukrainian_words()
    train = ukrainian_documents(cfg["n_train"], seed)
    heldout = ukrainian_documents(cfg["n_heldout"], seed + 1)
    items = make_items(cfg["n_mc"], cfg["n_gen"], seed + 3, words)
    return {"english": english_paragraphs(cfg["english_chars"]), "ukrainian_train": train,
            "ukrainian_heldout": heldout, **items,
            "source": {"english": "Python standard library pydoc_data.topics",
                       "ukrainian": "faker uk_UA word lists (lorem, person) through a fixed bigram chain"}}
