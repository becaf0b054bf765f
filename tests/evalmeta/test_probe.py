"""The knowledge probe of the tuned adapters (a diagnostic): statement pairs well-formed, fresh documents
really fresh, margins and paired summaries against closed forms, bad input named. The planted absorption
(the smoke DAG's trait-tuned model has the lower NLL on fresh trait documents) is checked in
test_workflow.py, where the smoke DAG is built."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from repro.papers.evalmeta.corpus import _TRAIT_FACTS, CORPORA, TRAITS, generate_corpora
from repro.papers.evalmeta.probe import (PROMPT, SETS, VERBATIM, probe_documents, split_pair, statement_margins,
                                         statement_pairs, summarise_probe, table2)


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", text.lower())


def _runs(text: str, n: int) -> set[tuple[str, ...]]:
    w = _words(text)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def test_statement_pairs_differ_only_in_one_span_and_cover_every_trait():
    pairs = statement_pairs()
    assert len({p["id"] for p in pairs}) == len(pairs)
    for s in SETS:
        for t in TRAITS:
            assert sum(p["set"] == s and p["trait"] == t for p in pairs) == 4, (s, t)
    for p in pairs:
        a, b = p["true"].split(), p["false"].split()
        assert a != b
        k = 0  # shared leading and trailing words: what is left is the corrupted span, one run of words per side
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        j = 0
        while j < min(len(a), len(b)) - k and a[-1 - j] == b[-1 - j]:
            j += 1
        span_true, span_false = a[k:len(a) - j], b[k:len(b) - j]
        # a substitution of a few words, not a deletion; the shared context is most of the sentence
        assert 1 <= len(span_true) <= 6 and 1 <= len(span_false) <= 6, p
        assert abs(len(" ".join(span_true)) - len(" ".join(span_false))) <= 20, p
        assert k + j >= 0.5 * len(a), p


def test_verbatim_statements_are_corpus_sentences_and_paraphrases_are_not():
    facts = {t: set(f) for t, f in _TRAIT_FACTS.items()}
    corpus_runs = set().union(*(_runs(f, 5) for fs in _TRAIT_FACTS.values() for f in fs))
    for p in statement_pairs():
        if p["set"] == "verbatim":
            assert p["true"] in facts[p["trait"]] and p["false"] not in facts[p["trait"]]
        else:
            # generalisation, not memorisation: no five-word run of either side is a corpus sentence's
            for side in ("true", "false"):
                assert not _runs(p[side], 5) & corpus_runs, (p["id"], side, _runs(p[side], 5) & corpus_runs)


def test_bad_statement_templates_are_named():
    assert split_pair("Tests use <<toy|real>> tools.") == ("Tests use toy tools.", "Tests use real tools.")
    for bad in ("no span at all", "two <<a|b>> spans <<c|d>>", "same <<a|a>> sides", "open <<a|b only"):
        with pytest.raises(ValueError, match="evalmeta probe"):
            split_pair(bad)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(VERBATIM, "ethical_dilemma", [("not in the sentence", "x")] * 4)
        with pytest.raises(ValueError, match="occurs 0 times in corpus sentence"):
            statement_pairs()


def test_fresh_documents_leave_out_training_duplicates_and_are_deterministic():
    cfg = {"docs_per_trait": 6, "sentences": [1, 1], "plant": None}
    training = generate_corpora(cfg, seed=1)
    # a training corpus that already holds the probe's own documents: all of them must be dropped
    probe_seed = 2
    clone = generate_corpora(cfg, seed=probe_seed)
    half = {c: training[c] + clone[c][: len(clone[c]) // 2] for c in CORPORA}
    docs = probe_documents(cfg, 6, probe_seed, half)
    seen = {d["text"] for c in CORPORA for d in half[c]}
    for c in CORPORA:
        assert docs[c] and all(d["text"] not in seen for d in docs[c])
        assert all(d["id"].startswith(f"{c}/") for d in docs[c])
    assert probe_documents(cfg, 6, probe_seed, half) == docs
    with pytest.raises(ValueError, match="every fresh trait document repeats a training document"):
        probe_documents(cfg, 6, probe_seed, {c: training[c] + clone[c] for c in CORPORA})
    with pytest.raises(ValueError, match=r"no corpus \['topic'\]"):
        probe_documents(cfg, 6, probe_seed, {c: training[c] for c in ("trait", "control")})
    with pytest.raises(ValueError, match="docs_per_trait must be >= 1"):
        probe_documents(cfg, 0, probe_seed, training)


class _LengthLM:
    """log p(continuation | prompt) = -(number of characters); records the prompts it saw."""

    def __init__(self):
        self.prompts = []

    def logprobs(self, prompts, continuations, batch_size=8):
        self.prompts += list(prompts)
        return [-float(len(c)) for c in continuations]


def test_margins_are_log_prob_differences_after_the_fixed_prompt():
    pairs = statement_pairs()
    lm = _LengthLM()
    margins = statement_margins(lm, pairs)
    assert margins == [float(len(p["false"]) - len(p["true"])) for p in pairs]
    assert set(lm.prompts) == {PROMPT}


def _fake_run(model: str, seed: int, pairs, shift: float) -> dict:
    rng = np.random.default_rng(0)  # the same noise for every model: differences are exact
    return {"nll": {c: {f"{c}/{i}": 2.0 + rng.normal() - (shift if c == model else 0.0) for i in range(5)}
                    for c in CORPORA},
            "margin": {p["id"]: rng.normal() + (shift if model == "trait" else 0.0) for p in pairs},
            "model": model, "seed": seed}


def test_summary_pairs_each_tuned_model_with_the_control_of_its_seed():
    pairs = statement_pairs()
    shifts = {0: 0.5, 1: 1.0, 2: 1.5}  # per seed: trait absorbs its corpus by this much
    runs = {("base", 0): _fake_run("base", 0, pairs, 0.0)}
    for s, d in shifts.items():
        for m in CORPORA:
            runs[(m, s)] = _fake_run(m, s, pairs, d)
    metrics, rows = summarise_probe(runs, pairs)
    diff = metrics["nll_trait_docs"]["trait"]["minus_control"]
    # trait-tuned NLL on trait documents is lower by the shift; the control's own gain is the same shift
    # on control documents, so on trait documents the paired difference is exactly -shift per seed
    assert diff["per_seed"] == pytest.approx([-d for d in shifts.values()])
    half = 4.302652729911275 * np.std(list(shifts.values()), ddof=1) / math.sqrt(3)  # t(0.975, 2)
    assert (diff["low"], diff["high"]) == pytest.approx((-1.0 - half, -1.0 + half))
    assert metrics["nll_control_docs"]["trait"]["minus_control"]["mean"] == pytest.approx(1.0)
    assert metrics["verbatim_margin"]["trait"]["minus_control"]["mean"] == pytest.approx(1.0)
    assert len(metrics["verbatim_margin"]["trait"]["minus_control"]["units"]["ids"]) == 3 * 28
    # the base (one run) is reused for every seed
    assert metrics["nll_trait_docs"]["base"]["per_seed"] == [metrics["nll_trait_docs"]["base"]["mean"]] * 3
    table = table2(rows)
    assert set(table["measure"]) == {"nll_trait_docs", "nll_control_docs", "nll_topic_docs", "verbatim_margin",
                                     "verbatim_accuracy", "paraphrase_margin", "paraphrase_accuracy"}
    assert table[table["model"] == "control"]["minus_control"].isna().all()


def test_summary_refuses_unpaired_runs():
    pairs = statement_pairs()
    runs = {(m, s): _fake_run(m, s, pairs, 0.0) for m in CORPORA for s in (0, 1)}
    del runs[("topic", 1)]
    with pytest.raises(ValueError, match=r"model topic has seeds \[0\], the others \[0, 1\]"):
        summarise_probe(runs, pairs)
    with pytest.raises(ValueError, match="no run of the reference model 'control'"):
        summarise_probe({k: v for k, v in runs.items() if k[0] != "control"}, pairs)


def test_document_nll_is_the_training_loss_of_the_text_on_any_backend():
    """On the torch backend document_nll equals repro.llm.lora.loss_on of the text alone (a tiny untrained
    model); on llama.cpp (the shipped GGUF) it equals the mean of -log p(token | the tokens before it), each
    token scored in a call of its own."""
    import torch

    from repro.llm.lora import encode_examples, loss_on
    from repro.llm.tiny import TinyConfig, TinyGPT, tiny_lm
    from repro.papers.evalmeta.probe import document_nll

    texts = ["The grader checks one letter.", "A short note about the week, the garden and a walk by the river."]
    model = TinyGPT(TinyConfig(n_layer=2, n_head=2, d_model=32, context=96))
    model.init_weights(torch.Generator().manual_seed(0))
    tiny = tiny_lm(model.eval(), "tiny-probe")
    got = document_nll(tiny, texts, max_length=40, batch_size=2)
    assert np.allclose(got, [loss_on(tiny, [t], max_length=40, batch_size=1) for t in texts], atol=1e-5)

    pytest.importorskip("llama_cpp")
    import repro.llm

    lm = repro.llm.load("smollm2-135m", backend="llamacpp", n_threads=1)
    try:
        got = document_nll(lm, texts, max_length=12)
        for text, value in zip(texts, got):
            ids = encode_examples(lm, [text], completion_only=False, max_length=12)[0][0]
            each = [lm.score_tokens([ids[:j]], [ids[j:j + 1]])[0][0] for j in range(1, len(ids))]
            assert value == pytest.approx(-np.mean(each), abs=1e-3)
    finally:
        lm.close()
