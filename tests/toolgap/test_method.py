"""toolgap's method: necessity labelling (closed form), mismatch and its decomposition on hand-made
labels, probes on planted hidden states, and the preset checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.papers.toolgap import grid
from repro.papers.toolgap.experiment import (decompose, evaluate, free_token_budget, mismatch, necessity, probe_analysis,
                                             summarise)
from repro.seeding import job_seed

GEN = {"max_new_tokens": 8, "max_new_tokens_prompted": 8, "max_new_tokens_tool": 16, "temperature": 1.0, "top_p": 1.0, "batch_size": 8}


class ScriptedLM:
    """A stand-in for a repro.llm model: tool-free answers are right with a planted probability per
    question (drawn from the sampling seed and the prompt's index, as TorchLM's streams are); with the
    tool in the prompt it calls exactly for the questions in ``calls``."""

    name = "scripted"

    def __init__(self, p_correct: dict[str, float], answers: dict[str, str], calls: set[str]):
        self.p, self.answers, self.calls = p_correct, answers, calls

    def generate(self, prompts, *, max_new_tokens, temperature, top_p=1.0, seed=0, stop=(), batch_size=8):
        out = []
        for i, prompt in enumerate(prompts):
            q = prompt.split("Q: ")[1].split("\n")[0]
            if prompt.startswith("Tools:"):
                out.append("<call>calc(x)</call>" if q in self.calls else self.answers[q])
            else:
                u = np.random.default_rng(job_seed(seed, "scripted", i)).random()
                out.append(self.answers[q] if u < self.p[q] else "-1")
        return out


def _items(p):
    return [{"id": f"q{i}", "question": f"What is {i}+0?", "answer": str(i), "group": "add1", "seen": True}
            for i in range(len(p))]


def test_necessity_threshold_is_k_of_r():
    nec = necessity(np.array([10, 9, 8, 0]), samples=10, min_correct=9)
    assert nec.tolist() == [False, False, True, True]  # >= 9 of 10 correct: unnecessary
    with pytest.raises(ValueError, match="unnecessary_min_correct must be in 1..samples"):
        necessity(np.array([1]), samples=10, min_correct=11)


def test_necessity_matches_the_binomial_tail():
    """An item answered right with probability p is unnecessary with probability P(Bin(r, p) >= k)."""
    r, k, p, n = 10, 9, 0.85, 400
    items = _items([p] * n)
    lm = ScriptedLM({it["question"]: p for it in items}, {it["question"]: it["answer"] for it in items}, set())
    records, _, _ = evaluate(lm, items, "arithmetic", "plain",
                          {"samples": r, "unnecessary_min_correct": k, "generation": GEN}, seed=5)
    expected = sum(math.comb(r, j) * p ** j * (1 - p) ** (r - j) for j in range(k, r + 1))  # 0.544
    observed = np.mean([not rec["necessary"] for rec in records])
    assert abs(observed - expected) < 4 * math.sqrt(expected * (1 - expected) / n)
    # the correct counts themselves follow Bin(r, p)
    assert abs(np.mean([rec["n_correct"] for rec in records]) - r * p) < 0.2


def test_evaluate_reads_behaviour_from_the_tool_prompt():
    items = _items([1.0, 0.0, 1.0, 0.0])
    qs = [it["question"] for it in items]
    lm = ScriptedLM(dict(zip(qs, [1.0, 0.0, 1.0, 0.0])), {q: it["answer"] for q, it in zip(qs, items)}, {qs[0], qs[1]})
    records, _, _ = evaluate(lm, items, "arithmetic", "plain", {"samples": 10, "unnecessary_min_correct": 9,
                                                                "generation": GEN}, seed=0)
    assert [r["necessary"] for r in records] == [False, True, False, True]
    assert [r["called"] for r in records] == [True, True, False, False]
    assert [r["mismatched"] for r in records] == [True, False, False, True]  # over-call, -, -, missed call


class WordTokenizer:
    """One token per whitespace-separated word."""

    def encode(self, text, *, prompt):
        return text.split()


class ChattyLM:
    """A prompted model that always knows the sum but explains first: "To solve this, add a and b: a+b"
    (8 words), cut at ``max_new_tokens`` words as generation is; with the tool it never calls."""

    name = "chatty"
    tokenizer = WordTokenizer()

    def render_chat(self, messages):
        return f"<sys>{messages[0]['content']}</sys>Q: {messages[1]['content']}\n"

    def generate(self, prompts, *, max_new_tokens, temperature, top_p=1.0, seed=0, stop=(), batch_size=8):
        out = []
        for prompt in prompts:
            a, b = prompt.split("What is ")[1].split("?")[0].split("+")
            words = f"To solve this, add {a} and {b}: {int(a) + int(b)}".split()
            out.append(" ".join(words[:max_new_tokens]) + (" " if len(words) > max_new_tokens else ""))
        return out


def test_a_reply_cut_by_the_token_budget_is_wrong_and_its_share_is_reported():
    """A reply cut before its number is wrong (no answer, even where an operand equals the sum), and
    the truncation share names the cause; the prompted models' own budget lets the same model finish."""
    items = [{"id": f"q{i}", "question": f"What is {i}+0?", "answer": str(i), "group": "add1", "seen": True}
             for i in range(6)]
    cfg = {"samples": 3, "unnecessary_min_correct": 3, "generation": {**GEN, "max_new_tokens_prompted": 7}}
    assert free_token_budget(cfg["generation"], "chat") == 7 and free_token_budget(cfg["generation"], "plain") == 8
    short, _, short_diag = evaluate(ChattyLM(), items, "arithmetic", "chat", cfg, seed=0)
    assert all(r["necessary"] and r["n_truncated"] == 3 for r in short)  # "... add 0 and 0: " is not "0"
    assert short[0]["sample_reply"].rstrip().endswith(":")
    assert short_diag == {"samples": 3, "max_new_tokens": 7, "replies": 18, "answer_share": 0.0, "truncated_share": 1.0,
                          "truncated_no_answer_share": 1.0}
    cfg["generation"]["max_new_tokens_prompted"] = 16
    full, _, diag = evaluate(ChattyLM(), items, "arithmetic", "chat", cfg, seed=0)
    assert not any(r["necessary"] for r in full) and diag["truncated_share"] == 0.0
    probes = {"decomposition": {"mismatched": 0, "cognition_to_action": 0, "cognition": 0, "undecided": 0},
              "cross_fit": False, "n_layers": 1, "cognition": None, "action": None, "cosine_last": None}
    metrics, _, _ = summarise({("chatty", "arithmetic"): {"records": short, "probes": probes,
                                                          "generation": short_diag}}, {"tiny-x": [3.0] + [1.0] * 99})
    assert metrics["generation"]["chatty__arithmetic"]["truncated_share"] == 1.0
    assert metrics["mismatch_detail"]["chatty__arithmetic"]["seen_correct_rate"] == 0.0  # the cut replies
    assert metrics["training"]["tiny-x"] == {"steps": 100, "first_loss": 3.0, "final_loss": 1.0,
                                             "final_loss_previous_window": pytest.approx(1.04)}


def test_mismatch_counts_both_directions():
    nec = [True, True, False, False, True]
    call = [True, False, True, False, False]
    assert mismatch(nec, call) == {"n": 5, "missed_call": 2, "over_call": 1, "mismatched": 3, "necessary": 3,
                                   "called": 2}


def test_decomposition_on_hand_made_labels():
    nec = [True, True, False, False, True, False]
    call = [False, False, True, True, True, False]
    says = [True, False, False, True, False, True]  # probe's verdict "necessary"
    # mismatched: 0 (missed, probe right), 1 (missed, probe wrong), 2 (over, probe right), 3 (over, probe wrong)
    assert decompose(nec, call, says) == {"mismatched": 4, "cognition_to_action": 2, "cognition": 2,
                                          "missed_call_c2a": 1, "over_call_c2a": 1}


def test_probe_analysis_on_planted_hidden_states():
    """Necessity is written along one axis of the last layer, the call along an orthogonal one; the
    probes read both there and nothing at the embedding layer, and their directions are orthogonal."""
    rng = np.random.default_rng(0)
    n, d = 300, 10
    nec, call = rng.random(n) < 0.5, rng.random(n) < 0.4
    hidden = rng.normal(size=(n, 3, 2, d)).astype(np.float32)  # (items, layers 0..2, positions, d)
    hidden[:, 2, -1, 0] += np.where(nec, 2.5, -2.5)
    hidden[:, 2, -1, 1] += np.where(call, 2.5, -2.5)
    records = [{"id": f"i{k}", "necessary": bool(nec[k]), "called": bool(call[k]), "seen": False} for k in range(n)]
    cfg = {"lr": 0.01, "weight_decay": 0.01, "epochs": 100, "test_fraction": 0.3, "decomposition_depth": 1.0,
           "decomposition_folds": 3}
    out = probe_analysis(hidden, records, cfg, seed=1)
    assert out["cognition"]["test_accuracy_last"][2] > 0.9 and out["action"]["test_accuracy_last"][2] > 0.9
    assert abs(out["cognition"]["test_accuracy_last"][0] - 0.5) < 0.2
    assert abs(out["cosine_last"][2]) < 0.2
    # the trajectory split: the necessity probe is right on almost every mismatched item here
    dec = out["decomposition"]
    assert dec["mismatched"] == int((nec != call).sum()) and dec["cognition_to_action"] >= 0.9 * dec["mismatched"]
    metrics, table, layers = summarise({("m", "arithmetic"): {"records": records, "probes": out}})
    assert metrics["mismatch"]["m__arithmetic"] == {"unit": "item", "successes": dec["mismatched"], "trials": n}
    assert metrics["decodable"]["cognition"]["m__arithmetic"]["unit"] == "item"
    assert metrics["cognition_to_action_share"]["trials"] == dec["mismatched"]
    assert len(layers) == 3 and table[0]["mismatched"] == dec["mismatched"]
    # the floors: per mismatched item, paired with the real probe's verdict by item; a probe trained on
    # permuted labels reads nothing, so it gets the true label about as often as the labels' balance allows
    per_item, floors = metrics["cognition_to_action_per_item"], metrics["cognition_to_action_floor"]
    assert sum(per_item["values"]) == dec["cognition_to_action"] and len(per_item["ids"]) == dec["mismatched"]
    for name in ("permuted", "majority"):
        assert floors[name]["ids"] == per_item["ids"] and floors[name]["unit"] == "model_item"
    assert 0.3 < np.mean(floors["permuted"]["values"]) < 0.7 < np.mean(per_item["values"])
    majority = nec.mean() >= 0.5
    assert floors["majority"]["values"] == [float(nec[i] == majority) for i in np.flatnonzero(nec != call)]


def test_constant_necessity_labels_give_no_probe_and_leave_mismatch_undecided():
    rng = np.random.default_rng(1)
    hidden = rng.normal(size=(30, 2, 1, 4)).astype(np.float32)
    records = [{"id": f"i{k}", "necessary": True, "called": bool(k % 2), "seen": False} for k in range(30)]
    cfg = {"lr": 0.01, "weight_decay": 0.01, "epochs": 10, "test_fraction": 0.3, "decomposition_depth": 1.0,
           "decomposition_folds": 3}
    out = probe_analysis(hidden, records, cfg, seed=0)
    assert out["cognition"] is None and out["cosine_last"] is None and out["action"] is not None
    assert out["decomposition"] == {"mismatched": 15, "cognition_to_action": 0, "cognition": 0,
                                    "missed_call_c2a": 0, "over_call_c2a": 0, "undecided": 15}


def _preset():
    return {"samples": 10, "unnecessary_min_correct": 9, "arithmetic": {"families": ["add1"], "tool_families": []},
            "models": [{"name": "tiny-w8", "kind": "tiny", "d_model": 8, "n_layer": 1, "n_head": 2}]}


@pytest.mark.parametrize("edit, match", [
    (lambda c: c.update(unnecessary_min_correct=11), r"toolgap.small.unnecessary_min_correct \(11\) exceeds"),
    (lambda c: c["models"][0].update(n_head=3), r"toolgap.small.models\[0\] \(tiny-w8\): d_model 8 is not divisible"),
    (lambda c: c["models"].append(dict(c["models"][0])), r"toolgap.small.models names \['tiny-w8'\] more than once"),
    (lambda c: c["arithmetic"].update(tool_families=["mul1"]), r"toolgap.small.arithmetic.tool_families \['mul1'\]"),
])
def test_impossible_preset_values_are_refused_by_name(edit, match):
    cfg = _preset()
    grid.check_preset(cfg, "toolgap.small")
    edit(cfg)
    with pytest.raises(ValueError, match=match):
        grid.check_preset(cfg, "toolgap.small")
