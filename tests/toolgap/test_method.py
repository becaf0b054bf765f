"""toolgap's method: necessity labelling (closed form), mismatch and its decomposition on hand-made
labels, probes on planted hidden states, the floors of the mismatch rate and of the late-layer cosine
(closed forms, brute force, and the claims on planted callers and probes), and the preset checks."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from repro.claims import FAIL, PASS, evaluate as check_claims, load_claims
from repro.papers.toolgap import grid
from repro.papers.toolgap.experiment import (FLOOR_PERMUTATIONS, decompose, evaluate, free_token_budget, mismatch,
                                             mismatch_floors, necessity, probe_analysis, summarise)
from repro.probes import random_abs_cosine
from repro.seeding import job_seed
from tests.conftest import REPO

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


def test_mismatch_floors_match_their_closed_forms_and_brute_force():
    """The permuted caller's floor is the mean mismatch over every shuffle of the calls, the call-rate
    floor the least mismatch over every caller with as many calls; their means are p(1 - c) + (1 - p)c
    and |p - c|."""
    nec = np.array([True, True, True, False, True, False, False])
    for called in ([True, False, False, True, False, False, False], [True] * 5 + [False] * 2, [False] * 7):
        call = np.array(called)
        floors = mismatch_floors(nec, call)
        p, c = nec.mean(), call.mean()
        assert floors["permuted"].mean() == pytest.approx(p * (1 - c) + (1 - p) * c)
        assert floors["call_rate"].mean() == pytest.approx(abs(p - c))
        shuffles = np.array([call[list(order)] for order in itertools.permutations(range(len(call)))])
        assert np.allclose(floors["permuted"], (shuffles != nec).mean(axis=0))
        callers = [np.isin(np.arange(len(call)), chosen) for chosen in itertools.combinations(range(len(call)), call.sum())]
        assert floors["call_rate"].sum() == pytest.approx(min((k != nec).sum() for k in callers))
    # a caller that never calls, on items that all need the tool, mismatches on every item: all floor
    assert mismatch_floors([True] * 4, [False] * 4)["call_rate"].tolist() == [1.0] * 4
    with pytest.raises(ValueError, match="one of each per item"):
        mismatch_floors([True, False], [True])


def _probes_without_probe(n_mismatched):
    """A run's probe block where no probe could be trained (constant labels): its items stay undecided."""
    return {"decomposition": {"mismatched": n_mismatched, "cognition_to_action": 0, "cognition": 0, "undecided": n_mismatched},
            "cross_fit": False, "n_layers": 1, "cognition": None, "action": None, "cosine_last": None}


def test_a_constant_caller_fails_the_mismatch_floor_claim_and_a_gap_passes(tmp_path):
    """Both models clear "mismatch > 0.2"; only the one that misses needed calls and makes unneeded ones
    clears the call-rate floor. The model that never calls, on items that all need the tool, sits on it
    exactly (every paired difference 0)."""
    rng = np.random.default_rng(4)
    n = 120
    runs = {}
    for model, nec, call in (("never", np.ones(n, bool), np.zeros(n, bool)),
                             ("gap", rng.random(n) < 0.5, rng.random(n) < 0.5)):  # calls blind to necessity
        recs = [{"id": f"q{k}", "necessary": bool(nec[k]), "called": bool(call[k]), "seen": False} for k in range(n)]
        runs[(model, "arithmetic")] = {"records": recs, "probes": _probes_without_probe(int((nec != call).sum()))}
    metrics, _, _ = summarise(runs)
    floor = metrics["mismatch_floor"]["call_rate"]
    assert floor["never__arithmetic"]["values"] == metrics["mismatch_per_item"]["never__arithmetic"]["values"] == [1.0] * n
    gap = metrics["mismatch_detail"]["gap__arithmetic"]
    assert np.mean(metrics["mismatch_per_item"]["gap__arithmetic"]["values"]) - np.mean(floor["gap__arithmetic"]["values"]) \
        == pytest.approx(2 * min(gap["missed_call"], gap["over_call"]) / n)
    claims = {c.id: c for c in load_claims(REPO / "workflow/claims/toolgap.yaml", REPO / "workflow/schemas/claims.schema.yaml")}
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    old, new = check_claims([claims["mismatch_substantial_every_model"], claims["mismatch_beyond_call_rate_every_model"]],
                            tmp_path / "metrics.json")
    assert old.status == PASS and new.status == FAIL
    assert "never__arithmetic: FAIL" in new.reason and "gap__arithmetic: PASS" in new.reason


def _cosine_run(n, d, nec, call, signal, seed):
    """Hidden states (items, layers 0..3, one position, d) of noise, with necessity written along axis 0 and
    the call along axis 1 of the last layer at strength ``signal``; the probe block of the one late layer."""
    rng = np.random.default_rng(seed)
    hidden = rng.normal(size=(n, 4, 1, d)).astype(np.float32)
    hidden[:, 3, -1, 0] += np.where(nec, signal, -signal)
    hidden[:, 3, -1, 1] += np.where(call, signal, -signal)
    records = [{"id": f"i{k}", "necessary": bool(nec[k]), "called": bool(call[k]), "seen": False} for k in range(n)]
    cfg = {"lr": 0.01, "weight_decay": 0.01, "epochs": 100, "test_fraction": 0.3, "decomposition_depth": 1.0,
           "decomposition_folds": 3}
    return records, probe_analysis(hidden, records, cfg, seed=seed)


def test_probes_that_read_nothing_sit_on_the_cosine_floor_at_the_random_level():
    """Unrelated labels on pure noise (d = 16, 280 training items): the shuffled probes' late |cosine|
    comes out at E|cos| of random directions, 0.203 at d = 16. One shuffle's |cosine| has sd
    sqrt(1/d - 0.203^2) = 0.15, so the mean of 20 has se 0.034: tolerance 3 se."""
    rng = np.random.default_rng(5)
    n, d = 400, 16
    nec, call = rng.random(n) < 0.5, rng.random(n) < 0.5
    _, out = _cosine_run(n, d, nec, call, signal=0.0, seed=6)
    assert out["late_layers"] == [3] and len(out["late_abs_cosine_permuted"]) == FLOOR_PERMUTATIONS
    assert np.mean(out["late_abs_cosine_permuted"]) == pytest.approx(random_abs_cosine(d), abs=0.1)


def test_probes_reading_orthogonal_signals_beat_the_cosine_floor():
    """Unrelated labels (a balanced 2 x 2 design: correlation exactly 0) read off two orthogonal axes
    of the last layer: the real probes' directions are near orthogonal, below the floor of probes fit on
    the shuffled states (about 0.203 at d = 16, se 0.034 as above)."""
    n, d = 400, 16
    k = np.arange(n)
    nec, call = k % 2 == 0, (k // 2) % 2 == 0
    records, out = _cosine_run(n, d, nec, call, signal=2.5, seed=7)
    floor = float(np.mean(out["late_abs_cosine_permuted"]))
    assert floor == pytest.approx(random_abs_cosine(d), abs=0.1)
    assert out["late_abs_cosine"] < 0.1 and out["late_abs_cosine"] < floor
    metrics, _, _ = summarise({("m", "arithmetic"): {"records": records, "probes": out}})
    assert metrics["late_abs_cosine_floor"]["permuted"] == {"unit": "model_task", "ids": ["m__arithmetic"],
                                                            "values": [pytest.approx(floor)]}
    assert metrics["late_abs_cosine_floor"]["random"]["values"] == [pytest.approx(random_abs_cosine(d))]
    assert metrics["late_abs_cosine"]["ids"] == ["m__arithmetic"]


def test_the_cosine_floor_keeps_the_labels_overlap():
    """The call agrees with necessity on 85% of items (correlation r about 0.7). Probes fit on shuffled
    states share the labels' overlap: their |cosine| is near r (both weights grow along X'y, whose
    expected cosine is r), well above the random level. Probes trained as the reference's that read the
    two labels off orthogonal axes follow the overlap further (near 2r / (1 + r^2)): on such labels no
    probe pair shows orthogonality, and the floor claim cannot pass."""
    rng = np.random.default_rng(7)
    n, d = 400, 16
    nec = rng.random(n) < 0.5
    call = np.where(rng.random(n) < 0.85, nec, ~nec)
    r = abs(np.corrcoef(nec, call)[0, 1])
    _, noise = _cosine_run(n, d, nec, call, signal=0.0, seed=8)
    assert np.mean(noise["late_abs_cosine_permuted"]) == pytest.approx(r, abs=0.15)
    _, read = _cosine_run(n, d, nec, call, signal=2.5, seed=8)
    assert read["late_abs_cosine"] == pytest.approx(2 * r / (1 + r * r), abs=0.1)
    assert read["late_abs_cosine"] > np.mean(read["late_abs_cosine_permuted"])


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
