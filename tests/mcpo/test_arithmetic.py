"""Task (ii): templated arithmetic with several answer forms; closed forms, planted truth on a tiny model, bad input."""

import copy

import numpy as np
import pytest
import torch

from repro.papers.mcpo.arithmetic import (ArithConfig, ArithTrain, candidate_logp, evaluate_arith, make_prompts,
                                          number_word, round_diagnostic, run_arith_seed, tiny_corpus,
                                          train_arith)
from repro.papers.mcpo.experiment import aggregate, alpha_key
from repro.rl.alpha_divergence import log_tilted_target

FORMS = ("digits", "word", "equals")


def test_number_words_and_candidates():
    assert [number_word(n) for n in (0, 7, 13, 20, 21, 40, 99)] == [
        "zero", "seven", "thirteen", "twenty", "twenty-one", "forty", "ninety-nine"]
    data = make_prompts(ArithConfig(n_train=3, n_eval=2), seed=4)
    assert len(data["prompts"]) == 5 and data["reward"].shape == (5, 6)
    for prompt, cands, rew in zip(data["prompts"], data["candidates"], data["reward"]):
        a, b = (int(t) for t in prompt.rsplit("\n", 1)[1].removesuffix(" is").split(" plus "))
        assert cands[:3] == [f" {a + b}", f" {number_word(a + b)}", f" = {a + b}"]   # correct sum, three forms
        assert rew.tolist() == [1.0] * 3 + [0.0] * 3
        wrong = int(cands[3])
        assert abs(wrong - (a + b)) == 1 and cands[3:] == [f" {wrong}", f" {number_word(wrong)}", f" = {wrong}"]
    again = make_prompts(ArithConfig(n_train=3, n_eval=2), seed=4)
    assert again["prompts"] == data["prompts"] and again["candidates"] == data["candidates"]


def test_target_keeps_the_reference_form_distribution_closed_form():
    """Equal rewards over the valid forms: pi*(form | correct) = pi_ref(form | correct), and pi*'s pass@1
    is p e^(1/beta) / (p e^(1/beta) + 1 - p) with p the reference's pass@1."""
    gen = torch.Generator().manual_seed(0)
    ref = torch.log_softmax(torch.randn(7, 6, generator=gen, dtype=torch.float64) * 2, 1)
    reward = torch.tensor([[1.0] * 3 + [0.0] * 3] * 7, dtype=torch.float64)
    beta = 0.3
    target = log_tilted_target(ref, reward, beta)
    target = target - torch.logsumexp(target, 1, keepdim=True)
    ev = dict(reward=reward, n_forms=3, ks=[4], mode_mass=0.05, cover_mass=0.01)
    star, floor = evaluate_arith(target, target, **ev), evaluate_arith(ref, target, **ev)
    assert star["form_tv"] == pytest.approx(0.0, abs=1e-12) and floor["form_tv"] == pytest.approx(0.0, abs=1e-12)
    assert star["form_entropy"] == pytest.approx(floor["form_entropy"], abs=1e-12)
    p = ref.exp()[:, :3].sum(1)
    closed = p * np.exp(1 / beta) / (p * np.exp(1 / beta) + 1 - p)
    assert star["pass1"] == pytest.approx(closed.mean().item(), rel=1e-12)
    assert star["pass4"] == pytest.approx((1 - (1 - closed) ** 4).mean().item(), rel=1e-12)
    assert star["kl_reverse"] == pytest.approx(0.0, abs=1e-12) and floor["kl_reverse"] > 0
    # a policy that drops a form moves its form distribution away from pi*'s by that form's share
    dropped = ref.clone()
    dropped[:, 1] = -60.0
    dropped = dropped - torch.logsumexp(dropped, 1, keepdim=True)
    share = (ref.exp()[:, 1] / p).mean().item()
    assert evaluate_arith(dropped, target, **ev)["form_tv"] == pytest.approx(share, rel=1e-6)


@pytest.fixture(scope="module")
def tiny_reference():
    """A tiny byte-level model trained on lines whose answer form is digits / word / equals w.p. 0.6 / 0.1 / 0.3."""
    from repro.llm.tiny import TinyConfig, TinyTrainConfig, train_tiny

    torch.set_num_threads(1)
    corpus = tiny_corpus(ArithConfig(), [0.6, 0.1, 0.3], 2000, seed=1)
    lm, _ = train_tiny(corpus, TinyTrainConfig(model=TinyConfig(n_layer=1, d_model=64, n_head=2, context=96),
                                               steps=120, batch_size=16), seed=2)
    return lm


def test_tiny_reference_learns_the_planted_form_shares(tiny_reference):
    data = make_prompts(ArithConfig(n_train=16, n_eval=0), seed=3)
    logp = candidate_logp(tiny_reference, data["prompts"], data["candidates"], grad=False)
    correct = (logp.exp() * (data["reward"] > 0)).reshape(16, 2, 3).sum(1)
    shares = (correct / correct.sum(1, keepdim=True)).mean(0).numpy()
    assert np.abs(shares - [0.6, 0.1, 0.3]).max() < 0.15, shares


def test_candidate_scores_equal_the_layers_logprobs_renormalised_in_any_batching(tiny_reference):
    """Two implementations agree: candidate_logp (differentiable, batched) and TorchLM.logprobs."""
    data = make_prompts(ArithConfig(n_train=5, n_eval=0), seed=7)
    ours = candidate_logp(tiny_reference, data["prompts"], data["candidates"], grad=False, batch_prompts=2)
    flat = tiny_reference.logprobs([p for p, row in zip(data["prompts"], data["candidates"]) for _ in row],
                                   [c for row in data["candidates"] for c in row])
    layer = torch.tensor(flat, dtype=torch.float64).reshape(5, 6)
    assert torch.allclose(ours, layer - torch.logsumexp(layer, 1, keepdim=True), atol=1e-5)
    whole = candidate_logp(tiny_reference, data["prompts"], data["candidates"], grad=True)
    assert whole.requires_grad and torch.allclose(whole.detach(), ours, atol=1e-6)
    with pytest.raises(ValueError, match="one row of candidates per prompt"):
        candidate_logp(tiny_reference, data["prompts"], data["candidates"][:-1], grad=False)


def _per_sequence_logp(lm, prompts, candidates):
    """The unpacked reading: each prompt + candidate its own sequence, differentiable (the pre-packing code)."""
    rows = []
    for prompt, cands in zip(prompts, candidates):
        c_ids, seq = lm.tokenizer.encode(prompt, prompt=True), []
        for cand in cands:
            t = lm.tokenizer.encode(cand, prompt=False)
            ids = torch.tensor([c_ids + t])
            logits, _ = lm.core.forward(ids, torch.ones_like(ids), torch.arange(ids.shape[1])[None])
            lp = torch.log_softmax(logits[0, len(c_ids) - 1:-1].float(), -1)
            seq.append(lp.gather(-1, torch.tensor(t)[:, None]).sum())
        rows.append(torch.stack(seq))
    seq = torch.stack(rows).double()
    return seq - torch.logsumexp(seq, 1, keepdim=True)


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_packed_candidates_equal_one_sequence_each_in_value_and_gradient_on_a_transformers_model(attention):
    """candidate_logp packs a prompt's candidates after it (a (B, T, T) mask through HFCore): a random
    Llama (both attention paths) gives the unpacked log-probabilities and their LoRA gradient to float rounding."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from repro.llm.hf import HFCore
    from repro.llm.lora import LoraConfig, add_adapter
    from repro.llm.tiny import ByteTokenizer
    from repro.llm.torchlm import TorchLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=260, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=256, attn_implementation=attention)
    lm = TorchLM("llama-test", HFCore(LlamaForCausalLM(cfg)), ByteTokenizer())
    _, params = add_adapter(lm, LoraConfig(targets=("q_proj", "v_proj"), rank=4, alpha=8.0), seed=1)
    with torch.no_grad():
        for p in params:
            p.add_(0.1 * torch.randn_like(p))           # a non-zero adapter (B starts at zero)
    data = make_prompts(ArithConfig(n_train=3, n_eval=0), seed=2)       # prompts of unequal length: padding
    weights = torch.randn(3, 6, dtype=torch.float64)

    def value_and_grad(fn):
        for p in params:
            p.grad = None
        logp = fn(lm, data["prompts"], data["candidates"])
        (weights * logp).sum().backward()
        return logp.detach(), [p.grad.clone() for p in params]

    packed, g_packed = value_and_grad(lambda *a: candidate_logp(*a, grad=True))
    single, g_single = value_and_grad(_per_sequence_logp)
    assert torch.allclose(packed, single, atol=1e-5)
    for a, b in zip(g_packed, g_single):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)
    assert torch.allclose(candidate_logp(lm, data["prompts"], data["candidates"], grad=False, batch_prompts=2),
                          packed, atol=1e-5)


def test_round_diagnostic_closed_form():
    """KL(pi || pi*) is 0 at pi = pi*; two candidates by hand: pi = (1/2, 1/2), pi* = (0.8, 0.2), reward (1, 0):
    KL = 1/2 ln(0.5 / 0.8) + 1/2 ln(0.5 / 0.2) = 1/2 ln(1.5625), reward 1/2; the mean over prompts."""
    star = torch.tensor([[0.8, 0.2], [0.3, 0.7]], dtype=torch.float64).log()
    reward = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    same = round_diagnostic(star, star, reward)
    assert same["kl_reverse"] == pytest.approx(0.0, abs=1e-12) and same["reward"] == pytest.approx((0.8 + 0.7) / 2)
    half = torch.full((1, 2), 0.5, dtype=torch.float64).log()
    one = round_diagnostic(half, star[:1], reward[:1])
    assert one["kl_reverse"] == pytest.approx(0.5 * np.log(1.5625)) and one["reward"] == pytest.approx(0.5)
    both = round_diagnostic(torch.cat([half, star[1:]]), star, reward)
    assert both["kl_reverse"] == pytest.approx(0.25 * np.log(1.5625))


@pytest.mark.parametrize("alpha, divergence", [(0.0, "kl_reverse"), (1.0, "kl_forward")])
def test_training_moves_the_policy_toward_the_planted_target(tiny_reference, alpha, divergence):
    """MCPO at alpha lowers its own divergence to pi* (alpha 0: KL(pi || pi*), alpha 1: KL(pi* || pi))
    on the training prompts, from the reference's."""
    task = ArithConfig(n_train=6, n_eval=0)
    data = make_prompts(task, seed=5)
    lm = copy.deepcopy(tiny_reference)
    ref = candidate_logp(lm, data["prompts"], data["candidates"], grad=False)
    target = log_tilted_target(ref, data["reward"], task.beta)
    target = target - torch.logsumexp(target, 1, keepdim=True)
    trace = train_arith(lm, data, ref, "mcpo", alpha, ArithTrain(steps=15, prompts_per_step=6, group=8, epochs=2,
                                                                 lr=3e-3, targets=("qkv", "fc")), task.beta, seed=6,
                        on_round=lambda m, r: {"all_kl": round_diagnostic(
                            candidate_logp(m, data["prompts"], data["candidates"], grad=False), target,
                            data["reward"])["kl_reverse"]})
    trained = candidate_logp(lm, data["prompts"], data["candidates"], grad=False)
    ev = dict(reward=data["reward"], n_forms=3, ks=[8], mode_mass=0.05, cover_mass=0.01)
    before, after = evaluate_arith(ref, target, **ev), evaluate_arith(trained, target, **ev)
    assert after[divergence] < 0.8 * before[divergence], (before, after)
    assert after["pass1"] > before["pass1"]
    # the trace: one entry per round; round 0 is the fresh adapter (= pi_ref) on every prompt (6 of 6 drawn),
    # and after the last round the every-prompt diagnostic is the trained policy's
    assert [t["round"] for t in trace] == list(range(15))
    assert trace[0]["kl_reverse"] == pytest.approx(before["kl_reverse"], abs=1e-6)
    assert trace[-1]["all_kl"] == pytest.approx(after["kl_reverse"], abs=1e-6)


def test_alpha0_and_rloo_share_the_samples_and_aggregate_pairs_them(tiny_reference):
    cfg = {"task": {"n_train": 4, "n_eval": 4}, "train": {"steps": 2, "prompts_per_step": 2, "group": 4, "epochs": 1,
                                                          "lr": 1e-3, "targets": ["qkv"]},
           "alphas": [0.0, 1.0], "ks": [8], "mode_mass": 0.05, "cover_mass": 0.01}
    runs = {s: run_arith_seed(lambda: copy.deepcopy(tiny_reference), cfg, 10 + s, 20 + s, alpha_key) for s in (0, 1)}
    for run in runs.values():
        assert set(run["methods"]) == {"pi_star", "pi_ref", "alpha0", "alpha1", "rloo"}
        # one Adam step per batch: alpha = 0 and RLOO differ by a gradient scale Adam removes (up to its eps)
        assert run["methods"]["alpha0"]["pass1"] == pytest.approx(run["methods"]["rloo"]["pass1"], abs=1e-3)
    bandit = {"data_seed": 0, "train_seed": 0, "alphas": [0.0, 1.0],
              "methods": {m: {"pass1": 0.5, "pass8": 0.9, "kl_reverse": 0.1} for m in ("alpha0", "alpha1", "rloo")}}
    metrics, tidy = aggregate({0: bandit, 1: bandit}, {"alphas": [0.0, 1.0], "ks": [8], "claim_k": 8,
                                                       "arithmetic": {"alphas": [0.0, 1.0], "ks": [8]}}, runs)
    assert metrics["arithmetic"]["passk"]["alpha1"]["per_unit"]["ids"] == ["seed0", "seed1"]
    assert set(metrics["arithmetic"]["alpha0_minus_rloo"]) == {"pass1", "kl_reverse", "form_entropy"}
    assert set(tidy.task) == {"bandit", "arithmetic"}


def test_bad_input_is_refused_with_its_name():
    with pytest.raises(ValueError, match="forms"):
        make_prompts(ArithConfig(forms=("digits", "roman")), seed=0)
    with pytest.raises(ValueError, match="max_operand"):
        make_prompts(ArithConfig(max_operand=60), seed=0)
    with pytest.raises(ValueError, match="form_shares"):
        tiny_corpus(ArithConfig(), [0.5, 0.5], 10, seed=0)
    with pytest.raises(ValueError, match="number_word"):
        number_word(100)
