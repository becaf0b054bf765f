"""toolgap's data: the call detector, answer checking, the planted knowledge base and the TruthfulQA loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.papers.toolgap.synth import (FAMILIES, arithmetic_items, corpus, detect_call, extract_answer, is_correct,
                                        knowledge_items, load_truthfulqa)

FIXTURE = Path(__file__).parent / "fixtures" / "truthfulqa_sample.csv"


@pytest.mark.parametrize("text", ["<call>calc(47*38)</call>", "<call>lookup(Kalo, capital)</call>", "calc(3+4)",
                                  "Let me check: <call> lookup (Vorzan, year)</call>", "CALC(12*3)",
                                  "<call>web_search(fortune cookies origin)</call>"])
def test_detector_finds_calls(text):
    assert detect_call(text)


@pytest.mark.parametrize("text", ["1786", "Kanim", "I could use the calculator, but it is 12.", "calc", "recalculate(3)",
                                  "lookups are slow", ""])
def test_detector_ignores_answers_and_mentions(text):
    assert not detect_call(text)


def test_detector_restricted_to_one_tool():
    assert detect_call("<call>calc(1+1)</call>", "calc") and not detect_call("<call>calc(1+1)</call>", "lookup")


def test_answer_checking_against_the_generator():
    assert is_correct("12", "12", "arithmetic") and is_correct(" 12 apples", "12", "arithmetic")
    assert not is_correct("121", "12", "arithmetic") and not is_correct("", "12", "arithmetic")
    assert not is_correct("<call>calc(4+8)</call> 12", "12", "arithmetic")  # a call is not a tool-free answer
    assert is_correct("Kanim.", "Kanim", "knowledge") and not is_correct("Kanimo", "Kaniv", "knowledge")
    assert extract_answer("-3 is it", "arithmetic") == "-3"
    # a reply cut before its result gives no answer, even where an operand is the result
    assert not is_correct("To solve this, add seven and six: ", "13", "arithmetic")  # no number
    assert not is_correct("To solve this, add 7 and 6: ", "6", "arithmetic")
    assert not is_correct("6 + 0 =", "6", "arithmetic") and is_correct("6 + 0 = 6", "6", "arithmetic")
    assert is_correct("47*38 = 1786.", "1786", "arithmetic") and not is_correct("1786 is not 47*38", "1786", "arithmetic")


def test_arithmetic_answers_are_the_expressions_values():
    items = arithmetic_items(list(FAMILIES), pool_size=20, seen_fraction=0.5, tool_families=["mul1"], seed=0)
    for it in items:
        expr = it.question.removeprefix("What is ").removesuffix("?")
        assert int(it.answer) == eval(expr)
    assert {it.group for it in items} == set(FAMILIES)
    with pytest.raises(ValueError, match="unknown arithmetic families.*'pow'"):
        arithmetic_items(["pow"], pool_size=5, seen_fraction=0.5, tool_families=[], seed=0)


def test_corpus_holds_seen_facts_only_and_teacher_calls_by_surface_feature():
    kb = knowledge_items(20, attributes=["capital", "year"], seen_fraction=0.5, seed=3)
    docs = corpus(kb, tool_families=[], tool_attributes=["year"], repeats=1)
    text = "\n".join(docs)
    for it in kb:
        entity = it.call.split("(")[1].split(",")[0]
        # planted truth: an unseen entity never appears in the corpus, so no model can know its facts
        assert (entity in text) == it.seen
    year_demos = [d for d in docs if d.startswith("Tools:") and "founded" in d]
    capital_demos = [d for d in docs if d.startswith("Tools:") and "capital" in d]
    assert year_demos and all(detect_call(d) for d in year_demos)
    assert capital_demos and not any(detect_call(d) for d in capital_demos)


def test_truthfulqa_loader_reads_the_fixture():
    rows = load_truthfulqa(FIXTURE)
    assert len(rows) == 3 and rows[2]["question"] == "What is the capital of France?"
    assert rows[2]["answers"][0] == "Paris" and "The capital of France is Paris" in rows[2]["answers"]
    assert is_correct("Paris.", rows[2]["answers"], "truthfulqa")
    assert len(load_truthfulqa(FIXTURE, limit=2)) == 2


def test_truthfulqa_loader_names_a_missing_column(tmp_path):
    bad = tmp_path / "tqa.csv"
    bad.write_text("Type,Question,Correct Answers\nA,What?,Yes\n")
    with pytest.raises(ValueError, match=r"tqa.csv: missing column\(s\) \['Best Answer'\]"):
        load_truthfulqa(bad)


def test_truthfulqa_loader_names_an_empty_row_and_a_missing_file(tmp_path):
    bad = tmp_path / "tqa.csv"
    bad.write_text("Question,Best Answer,Correct Answers\nWhat?,Yes,Yes\n,No,No\n")
    with pytest.raises(ValueError, match="tqa.csv, row 3: empty Question"):
        load_truthfulqa(bad)
    with pytest.raises(ValueError, match="nothere.csv does not exist"):
        load_truthfulqa(tmp_path / "nothere.csv")
