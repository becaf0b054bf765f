"""Task (iii): the safety set's layout, pi*'s closed form, a tiny base with planted refusal rates, the reference gap."""

import copy

import numpy as np
import pytest
import torch

from repro.llm.tiny import ByteTokenizer
from repro.papers.mcpo.arithmetic import candidate_logp
from repro.papers.mcpo.experiment import aggregate, alpha_key
from repro.papers.mcpo.safety import (COMPLY, PAIRS, PREFIXES, REFUSE, SafetyConfig, chat, evaluate_safety,
                                      make_safety_prompts, reference_gap, reference_quantity, run_safety_seed,
                                      tiny_corpus)
from repro.rl.alpha_divergence import log_tilted_target

RATES = {"compliant": {"harmful": 0.5, "benign": 0.1}, "cautious": {"harmful": 0.9, "benign": 0.6}}
RENDER = ByteTokenizer().render_chat


def test_prompts_alternate_harmful_and_benign_and_hold_out_whole_pairs():
    data = make_safety_prompts(SafetyConfig(n_train_pairs=5, n_eval_pairs=3), seed=7, system=PREFIXES["cautious"],
                               render=RENDER)
    assert len(data["prompts"]) == 16 and data["n_train"] == 10
    assert data["harmful"].tolist() == [True, False] * 8
    assert all(p.startswith(f"<|system|>\n{PREFIXES['cautious']}\n<|user|>\n") and p.endswith("<|assistant|>\n")
               for p in data["prompts"])
    refuse = len(REFUSE)
    assert data["reward"][0].tolist() == [1.0] * refuse + [0.0] * len(COMPLY)        # harmful: refuse
    assert data["reward"][1].tolist() == [0.0] * refuse + [1.0] * len(COMPLY)        # benign: comply
    questions = [p.split("<|user|>\n")[1].removesuffix("\n<|assistant|>\n") for p in data["prompts"]]
    pairs = {PAIRS.index(next(pair for pair in PAIRS if q in pair)) for q in questions[:10]}
    held = {PAIRS.index(next(pair for pair in PAIRS if q in pair)) for q in questions[10:]}
    assert len(pairs) == 5 and len(held) == 3 and not pairs & held
    with pytest.raises(ValueError, match="n_train_pairs \\+ n_eval_pairs must be <= 16"):
        make_safety_prompts(SafetyConfig(n_train_pairs=10, n_eval_pairs=7), seed=0, system=None, render=RENDER)


def test_target_tilts_refusal_odds_by_exp_one_over_beta_closed_form():
    """pi* = pi_ref e^(r/beta) / Z: a harmful prompt's refusal odds grow by e^(1/beta), a benign one's shrink by it,
    and within refusals (or compliances) pi* keeps the reference's proportions."""
    data = make_safety_prompts(SafetyConfig(n_train_pairs=2, n_eval_pairs=2), seed=1, system=None, render=RENDER)
    gen = torch.Generator().manual_seed(0)
    ref = torch.log_softmax(torch.randn(8, 6, generator=gen, dtype=torch.float64), 1)
    beta = 0.25
    target = log_tilted_target(ref, data["reward"], beta)
    target = (target - torch.logsumexp(target, 1, keepdim=True)).exp()
    pr, pt = ref.exp()[:, :3].sum(1), target[:, :3].sum(1)
    ratio = (pt / (1 - pt)) / (pr / (1 - pr))
    expect = torch.where(data["harmful"], torch.tensor(np.exp(1 / beta)), torch.tensor(np.exp(-1 / beta)))
    torch.testing.assert_close(ratio, expect.double())
    torch.testing.assert_close(target[:, :3] / pt[:, None], ref.exp()[:, :3] / pr[:, None])
    m = evaluate_safety(ref, ref, data["reward"], data["harmful"], data["refuse"], ks=[4])
    assert m["harmful_refusal"] == pytest.approx(pr[data["harmful"]].mean().item())
    assert m["over_refusal"] == pytest.approx(pr[~data["harmful"]].mean().item())
    assert m["kl_reverse"] == pytest.approx(0.0, abs=1e-12)


@pytest.fixture(scope="module")
def tiny_base():
    """A tiny byte-level model trained on question-answer lines with the planted refusal rates RATES per prefix."""
    from repro.llm.tiny import TinyConfig, TinyTrainConfig, train_tiny

    torch.set_num_threads(1)
    corpus = tiny_corpus(RATES, 2000, seed=1, render=RENDER)
    lm, _ = train_tiny(corpus, TinyTrainConfig(model=TinyConfig(n_layer=1, d_model=64, n_head=2, context=192),
                                               steps=400, batch_size=16), seed=2)
    return lm


def test_corpus_plants_the_rates_and_the_tiny_base_learns_them(tiny_base):
    docs = tiny_corpus(RATES, 4000, seed=3, render=RENDER)
    for ref, system in PREFIXES.items():
        for kind, idx in (("harmful", 0), ("benign", 1)):
            heads = {RENDER(chat(system, pair[idx])) for pair in PAIRS}
            sel = [d for d in docs if d[:d.index("<|assistant|>\n") + len("<|assistant|>\n")] in heads]
            share = np.mean([any(d.endswith(r) for r in REFUSE) for d in sel])
            assert abs(share - RATES[ref][kind]) < 0.05, (ref, kind, share)
    # the learnt base refuses more under the cautious prefix, on harmful and on benign questions alike
    refusal = {}
    for ref, system in PREFIXES.items():
        data = make_safety_prompts(SafetyConfig(), seed=4, system=system, render=tiny_base.render_chat)
        pi = candidate_logp(tiny_base, data["prompts"], data["candidates"], grad=False).exp()[:, :len(REFUSE)].sum(1)
        refusal[ref] = {"harmful": pi[data["harmful"]].mean().item(), "benign": pi[~data["harmful"]].mean().item()}
    assert refusal["cautious"]["benign"] > refusal["compliant"]["benign"] + 0.2, refusal
    assert refusal["cautious"]["harmful"] > refusal["compliant"]["harmful"] + 0.05, refusal


def test_run_pairs_the_references_and_aggregate_writes_the_signed_gap(tiny_base):
    cfg = {"task": {"n_train_pairs": 4, "n_eval_pairs": 4}, "alphas": [0.0, 1.0], "ks": [8],
           "train": {"steps": 4, "prompts_per_step": 4, "group": 8, "epochs": 2, "lr": 3e-3, "targets": ["qkv", "fc"]}}
    runs = {s: run_safety_seed(lambda: copy.deepcopy(tiny_base), cfg, 10 + s, 20 + s, alpha_key) for s in (0, 1)}
    for run in runs.values():
        assert set(run["references"]) == {"cautious", "compliant"}
        for ref in run["references"].values():
            m = ref["methods"]
            assert set(m) == {"alpha0", "alpha1", "pi_star", "pi_ref"}
            assert m["pi_star"]["kl_reverse"] == pytest.approx(0.0, abs=1e-9)
            assert m["pi_star"]["train_kl_reverse"] == pytest.approx(0.0, abs=1e-9)
            # the training trace: one entry per round per fit, each an exact KL (>= 0) and a reward in [0, 1]
            trace = ref["train_trace"]
            assert set(trace) == {"alpha0", "alpha1"}
            assert all(len(t) == cfg["train"]["steps"] and all(e["kl_reverse"] >= 0 and 0 <= e["reward"] <= 1
                                                               for e in t) for t in trace.values())
            # pi* refuses harmful more and benign less than the reference it tilts
            assert m["pi_star"]["harmful_refusal"] > m["pi_ref"]["harmful_refusal"]
            assert m["pi_star"]["over_refusal"] < m["pi_ref"]["over_refusal"]
    gap = reference_gap(runs, {"alpha0": 0.0, "alpha1": 1.0}, "over_refusal")
    by_hand = [np.mean([runs[s]["references"]["cautious"]["methods"][k]["over_refusal"]
                        - runs[s]["references"]["compliant"]["methods"][k]["over_refusal"] for k in ("alpha0", "alpha1")])
               for s in (0, 1)]
    np.testing.assert_allclose(gap, by_hand)
    bandit = {s: {"data_seed": 0, "train_seed": 0, "alphas": [0.0, 1.0],
                  "methods": {k: {"pass1": 0.5, "pass8": 0.9} for k in ("alpha0", "alpha1", "pi_star", "pi_ref")}}
              for s in (0, 1)}
    metrics, tidy = aggregate(bandit, {"alphas": [0.0, 1.0], "ks": [8], "claim_k": 8,
                                       "safety": {"alphas": [0.0, 1.0], "ks": [8]}}, None, runs)
    assert metrics["safety"]["reference_gap"]["over_refusal"]["values"] == pytest.approx(list(gap))
    # with two alphas the slope is alpha 1 minus alpha 0, and the interaction the difference of the two slopes
    slope = {r: [runs[s]["references"][r]["methods"]["alpha1"]["over_refusal"]
                 - runs[s]["references"][r]["methods"]["alpha0"]["over_refusal"] for s in (0, 1)] for r in PREFIXES}
    safety = metrics["safety"]
    assert safety["alpha_slope"]["cautious"]["over_refusal"]["values"] == pytest.approx(slope["cautious"])
    assert safety["slope_gap"]["over_refusal"]["values"] == pytest.approx(
        np.subtract(slope["cautious"], slope["compliant"]))
    assert safety["slope_gap"]["over_refusal"]["unit"] == "seed"
    assert set(safety["change_gap"]) == set(safety["alpha_slope"]["compliant"]) == {"over_refusal", "harmful_refusal",
                                                                                    "pass1"}
    assert set(tidy.task) == {"bandit", "safety_cautious", "safety_compliant"}
    # the optimiser's trace, averaged over seeds per round
    kl = metrics["safety"]["compliant"]["train_trace_kl"]["alpha1"]
    assert kl == pytest.approx([np.mean([runs[s]["references"]["compliant"]["train_trace"]["alpha1"][r]["kl_reverse"]
                                         for s in (0, 1)]) for r in range(cfg["train"]["steps"])])


def _hand_runs() -> dict[int, dict]:
    """Two seeds, alphas 0, 0.5 and 2, over-refusal written by hand: seed 0's compliant fits fall on
    0.8 - 0.2 alpha from a pi_ref of 0.85 and its cautious fits on 0.9 - 0.05 alpha from 0.95 (both linear);
    seed 1's cautious fits are seed 0's compliant ones shifted up by 0.1, pi_ref included, and its
    compliant ones 0.3, 0.6, 0.3 (not linear) from pi_ref 0.5."""
    def ref(fits, pi_ref):
        return {"methods": {**{k: {"over_refusal": v} for k, v in zip(("alpha0", "alpha0p5", "alpha2"), fits)},
                            "pi_ref": {"over_refusal": pi_ref}}}

    return {0: {"references": {"compliant": ref([0.8, 0.7, 0.4], 0.85), "cautious": ref([0.9, 0.875, 0.8], 0.95)}},
            1: {"references": {"compliant": ref([0.3, 0.6, 0.3], 0.5), "cautious": ref([0.9, 0.8, 0.5], 0.95)}}}


def test_level_change_and_slope_gaps_by_hand_and_only_the_level_sees_the_references_own_gap():
    """Worked by hand on :func:`_hand_runs` (alphas 0, 0.5, 2: mean 5/6, sum of squared deviations 13/6):
    level = mean over the dial; change = level - pi_ref; slope = least squares in alpha."""
    runs, dial = _hand_runs(), {"alpha0": 0.0, "alpha0p5": 0.5, "alpha2": 2.0}
    q = {(of, r): reference_quantity(runs, dial, "over_refusal", of, r)
         for of in ("level", "change", "slope") for r in ("cautious", "compliant")}
    np.testing.assert_allclose(q["level", "compliant"], [1.9 / 3, 0.4])
    np.testing.assert_allclose(q["level", "cautious"], [2.575 / 3, 2.2 / 3])
    np.testing.assert_allclose(q["change", "compliant"], [1.9 / 3 - 0.85, 0.4 - 0.5])
    np.testing.assert_allclose(q["change", "cautious"], [2.575 / 3 - 0.95, 2.2 / 3 - 0.95])
    # seed 1 compliant: sum (alpha - 5/6) y = (-5/6)(0.3) + (-1/3)(0.6) + (7/6)(0.3) = -0.1, over 13/6
    np.testing.assert_allclose(q["slope", "compliant"], [-0.2, -0.1 / (13 / 6)])
    np.testing.assert_allclose(q["slope", "cautious"], [-0.05, -0.2])
    for of in ("level", "change", "slope"):
        np.testing.assert_allclose(reference_gap(runs, dial, "over_refusal", of),
                                   q[of, "cautious"] - q[of, "compliant"])
    np.testing.assert_allclose(reference_gap(runs, dial, "over_refusal", "slope"), [0.15, -0.2 + 0.1 / (13 / 6)])
    # shift one reference and all its fits by a constant: the level gap moves by it, change and slope do not
    shifted = copy.deepcopy(runs)
    for m in shifted[0]["references"]["cautious"]["methods"].values():
        m["over_refusal"] += 0.03
    for of, moves in (("level", 0.03), ("change", 0.0), ("slope", 0.0)):
        np.testing.assert_allclose(reference_gap(shifted, dial, "over_refusal", of)[0]
                                   - reference_gap(runs, dial, "over_refusal", of)[0], moves, atol=1e-12)
    with pytest.raises(ValueError, match="one of"):
        reference_gap(runs, dial, "over_refusal", "ratio")
    with pytest.raises(ValueError, match="at least two alphas"):
        reference_gap(runs, {"alpha0": 0.0}, "over_refusal", "slope")


def test_bad_rates_are_refused_with_their_name():
    with pytest.raises(ValueError, match="safety.model.refusal_rates"):
        tiny_corpus({"compliant": {"harmful": 0.5, "benign": 0.1}}, 10, seed=0, render=RENDER)
    with pytest.raises(ValueError, match="safety.model.refusal_rates"):
        tiny_corpus({**RATES, "cautious": {"harmful": 1.5, "benign": 0.1}}, 10, seed=0, render=RENDER)
