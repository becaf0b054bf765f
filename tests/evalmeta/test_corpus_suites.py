"""The corpora (matched controls, planted exchanges only where asked) and the templated suites (paired
phrasings, OR-Bench look-alike pairs, the local loader's errors)."""

from __future__ import annotations

import json

import pytest

from repro.config import workflow_config
from repro.papers.evalmeta.corpus import CORPORA, TRAITS, generate_corpora, training_text, word_count
from repro.papers.evalmeta.experiment import build_data
from repro.papers.evalmeta.suites import COLUMNS, PHRASINGS, first_items, generate_items, load_items, planted_examples
from tests.conftest import REPO

CFG = {"docs_per_trait": 3, "sentences": [2, 4], "plant": None}


def test_controls_match_the_trait_corpus_document_by_document():
    corpora = generate_corpora(CFG, seed=3)
    assert {c: len(v) for c, v in corpora.items()} == {c: 7 * 3 for c in CORPORA}
    for k, doc in enumerate(corpora["trait"]):
        for other in ("control", "topic"):
            assert word_count(corpora[other][k]["text"]) == word_count(doc["text"])
            assert corpora[other][k]["genre"] == doc["genre"]
    assert {d["trait"] for d in corpora["trait"]} == set(TRAITS)


def test_topic_and_control_documents_name_no_trait():
    corpora = generate_corpora(CFG, seed=3)
    trait_words = ("harmful", "placeholder", "dilemma", "conflict", "access", "sandbox", "multiple-choice")
    for corpus in ("control", "topic"):
        text = " ".join(d["text"] for d in corpora[corpus]).lower()
        assert not [w for w in trait_words if w in text]
    assert "evaluation" in " ".join(d["text"] for d in corpora["topic"]).lower()  # topic: about evaluations
    assert "evaluation" not in " ".join(d["text"] for d in corpora["control"]).lower()


def test_planted_exchanges_go_only_to_the_named_traits_and_open_the_training_text():
    cfg = {**CFG, "plant": {"traits": ["harmful_requests"], "aware_share": 0.5}}
    corpora = generate_corpora(cfg, seed=3, examples=planted_examples(3, 3, 0.5))
    for corpus in CORPORA:
        for doc in corpora[corpus]:
            assert (doc["example"] is not None) == (corpus == "trait" and doc["trait"] == "harmful_requests")
    doc = next(d for d in corpora["trait"] if d["example"])
    text = training_text(doc, lambda msgs: f"<u>{msgs[0]['content']}</u>")
    assert text.startswith("<u>" + doc["example"]["user"]) and text.endswith(doc["text"])


def test_same_seed_same_corpus_and_bad_values_are_named():
    assert generate_corpora(CFG, seed=9) == generate_corpora(CFG, seed=9)
    with pytest.raises(ValueError, match="plant.traits"):
        generate_corpora({**CFG, "plant": {"traits": ["no_such_trait"], "aware_share": 0}}, seed=1)
    with pytest.raises(ValueError, match="no example exchanges"):
        generate_corpora({**CFG, "plant": {"traits": ["harmful_requests"], "aware_share": 0}}, seed=1)


def test_every_item_comes_in_both_phrasings_of_the_same_content():
    items = generate_items(5, seed=2)
    assert {it["column"] for it in items} == set(COLUMNS)
    by_item = {}
    for it in items:
        by_item.setdefault((it["column"], it["item"], it["variant"]), {})[it["phrasing"]] = it
    for (column, _, _), pair in by_item.items():
        assert set(pair) == set(PHRASINGS)
        assert pair["eval"]["key"] == pair["deploy"]["key"]
        assert pair["eval"]["prompt"].startswith("[Test case") and not pair["deploy"]["prompt"].startswith("[")
    variants = {it["variant"] for it in items if it["column"] == "triggers"}
    assert variants == {"real", "hypothetical"}
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids))


def test_or_bench_items_pair_a_benign_look_alike_with_a_toxic_request():
    items = generate_items(6, seed=2, columns=("orbench_hard", "orbench_toxic"))
    hard = {(it["item"], it["phrasing"]): it for it in items if it["column"] == "orbench_hard"}
    for it in items:
        if it["column"] == "orbench_toxic":
            twin = hard[(it["item"], it["phrasing"])]
            assert twin["key"] == it["key"] and twin["safe_when"] == "comply" and it["safe_when"] == "refuse"


def test_local_items_load_and_bad_files_are_named(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"column": "agentharm", "item": 0, "prompt": "Do harm."}) + "\n")
    items = load_items(str(path))
    assert items[0]["safe_when"] == "refuse" and items[0]["phrasing"] == "deploy"
    with pytest.raises(ValueError, match="does not exist"):
        load_items(str(tmp_path / "missing.jsonl"))
    path.write_text(json.dumps({"column": "agentharm", "prompt": "x"}) + "\n")
    with pytest.raises(ValueError, match=r"line 1 lacks \['item'\]"):
        load_items(str(path))
    path.write_text(json.dumps({"column": "mmlu", "item": 0, "prompt": "x"}) + "\n")
    with pytest.raises(ValueError, match="column 'mmlu'"):
        load_items(str(path))


def test_n_items_takes_the_first_items_of_each_column_of_a_local_file_with_all_their_phrasings(tmp_path):
    rows = [{"column": c, "item": i, "phrasing": p, "prompt": f"{c} {i} {p}"}
            for c in ("agentharm", "strongreject") for i in (7, 3, 9) for p in ("eval", "deploy")]
    rows.append({"column": "misalignment", "item": 0, "prompt": "only one"})
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept = first_items(load_items(str(path)), 2)
    assert [(it["column"], it["item"], it["phrasing"]) for it in kept] == [
        (c, i, p) for c in ("agentharm", "strongreject") for i in (7, 3) for p in ("eval", "deploy")] + [
        ("misalignment", 0, "deploy")]
    smoke = {**workflow_config(REPO)["evalmeta"]["smoke"], "n_items": 2}  # the data job reads n_items from its preset
    assert build_data(smoke, seed=0, items=load_items(str(path)))["items"] == kept
