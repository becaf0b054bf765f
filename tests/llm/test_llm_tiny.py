"""The local backend's generation, scoring and hidden states, on a tiny model trained from scratch.

The tiny model shares every line of decoding, scoring and hidden-state code with SmolLM2
(repro.llm.torchlm), so properties that do not need a pretrained model are pinned here, fast:
planted knowledge is recalled, sampling draws from softmax(logits / T), top-p keeps to the nucleus,
padding changes nothing, log-probabilities equal the logits' log-softmax, LoRA resumes exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

import repro.llm
from repro.llm.lora import LoraConfig, checkpoints, finetune_lora, loss_on
from repro.llm.tiny import load_tiny, save_tiny

from tests.llm.conftest import TINY_FACTS


def _half(fact: str) -> tuple[str, str]:
    k = len(fact) // 2
    return fact[:k], fact[k:]


def _next_token_probs(lm, prompt: str, temperature: float = 1.0) -> np.ndarray:
    """softmax(logits / T) of the token after ``prompt``, from one unpadded forward pass."""
    ids = torch.tensor([lm.tokenizer.encode(prompt, prompt=True)])
    with torch.inference_mode():
        logits, _ = lm.core.forward(ids, torch.ones_like(ids), torch.arange(ids.shape[1])[None])
    return torch.softmax(logits[0, -1].double() / temperature, -1).numpy()


def test_a_tiny_model_trained_from_scratch_recalls_its_planted_facts(tiny):
    lm, losses = tiny
    assert np.mean(losses[-10:]) < 0.25 * losses[0]  # from ln(259) = 5.56 nats/byte at random init
    heads, tails = zip(*map(_half, TINY_FACTS))
    assert lm.generate(list(heads), max_new_tokens=30) == list(tails)  # stops at the planted EOS
    # and a fact it never saw is less likely than one it did
    seen, unseen = lm.logprobs(["the cat sat"] * 2, [" on the mat.", " on the hat."])
    assert seen > unseen + 2.0


def test_batched_greedy_decoding_equals_one_prompt_at_a_time(tiny):
    lm, _ = tiny
    prompts = ["the", "bob likes bl", "a red fox ran", "x"]
    alone = [lm.generate([p], max_new_tokens=12)[0] for p in prompts]
    assert lm.generate(prompts, max_new_tokens=12, batch_size=4) == alone  # left padding is invisible


def test_finished_prompts_leave_the_batch_and_the_others_decode_unchanged(tiny, monkeypatch):
    lm, _ = tiny
    prompts = ["the cat", "bob likes bl", "a red fox ran", "the", "x"]
    widths = []
    step = lm.core.step
    monkeypatch.setattr(lm.core, "step", lambda ids, *a: widths.append(ids.shape[0]) or step(ids, *a))
    for kw in ({}, {"temperature": 1.5, "seed": 3}):
        kw = {"max_new_tokens": 20, "stop": [" the", "."], **kw}
        alone = lm.generate(prompts, batch_size=1, **kw)  # a sample's seed is its prompt's index
        widths.clear()
        assert lm.generate(prompts, batch_size=5, **kw) == alone
        assert widths[0] == 5 and widths == sorted(widths, reverse=True) and widths[-1] < 5  # it shrank
        assert len({len(a) for a in alone}) > 1  # prompts finish at different steps


def test_stop_strings_cut_the_output_and_max_new_tokens_caps_it(tiny):
    lm, _ = tiny
    full = lm.generate(["the cat"], max_new_tokens=30)[0]
    assert full == " sat on the mat."
    assert lm.generate(["the cat"], max_new_tokens=30, stop=["on"])[0] == " sat "
    assert lm.generate(["the cat"], max_new_tokens=30, stop=["zz", " the"])[0] == " sat on"
    assert lm.generate(["the cat"], max_new_tokens=4)[0] == full[:4]  # bytes are tokens here
    assert lm.generate(["the cat"], max_new_tokens=0)[0] == ""


def test_sampling_draws_from_the_tempered_softmax(tiny):
    """4,000 one-token samples against softmax(logits / T): a chi-square goodness-of-fit test.

    Categories: each ASCII byte, and "other" (bytes >= 128, which decode alone to U+FFFD, and the
    special tokens, which decode to ""); those with expected count < 5 are pooled. The seed is fixed,
    so the test is deterministic; a correct sampler fails it with probability 1e-3 over seeds, a
    wrong temperature (or greedy leakage) by hundreds of standard deviations.
    """
    lm, _ = tiny
    n, temperature = 4000, 2.0
    probs = _next_token_probs(lm, "the ", temperature)
    outs = lm.generate(["the "] * n, max_new_tokens=1, temperature=temperature, seed=5, batch_size=n)
    codes = [ord(o) if len(o) == 1 and ord(o) < 128 else 128 for o in outs]
    counts = np.bincount(codes, minlength=129).astype(float)
    expected = np.append(probs[:128], probs[128:].sum()) * n
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    assert big.sum() > 10  # the test has power: T = 2 spreads the mass over many bytes


def test_top_p_samples_only_from_the_nucleus(tiny):
    lm, _ = tiny
    probs = _next_token_probs(lm, "the ", 2.0)
    order = np.argsort(-probs)
    before = np.cumsum(probs[order]) - probs[order]
    nucleus = set(order[before < 0.5].tolist())
    outs = lm.generate(["the "] * 500, max_new_tokens=1, temperature=2.0, top_p=0.5, seed=1, batch_size=500)
    drawn = {ord(o) for o in outs if len(o) == 1 and ord(o) < 128}
    assert len(drawn) == len(set(outs)) and drawn <= nucleus and len(drawn) >= min(2, len(nucleus))


def test_seeded_sampling_is_reproducible_and_does_not_depend_on_batching(tiny):
    lm, _ = tiny
    prompts = ["the", "a", "bob", "th"]
    kw = {"max_new_tokens": 10, "temperature": 1.5, "seed": 123}
    first = lm.generate(prompts, batch_size=4, **kw)
    assert lm.generate(prompts, batch_size=1, **kw) == first
    assert lm.generate(prompts, batch_size=3, **kw) == first
    assert lm.generate(prompts, batch_size=4, **{**kw, "seed": 124}) != first


def test_logprobs_equal_the_log_softmax_of_the_logits(tiny):
    lm, _ = tiny
    pairs = [("the cat sat", " on the mat."), ("a", " red"), ("bob likes blue", " hats."), ("q", "zz")]
    got = lm.logprobs([p for p, _ in pairs], [c for _, c in pairs], batch_size=4)
    per_token = lm.logprobs([p for p, _ in pairs], [c for _, c in pairs], per_token=True, batch_size=3)
    for (prompt, cont), total, tokens in zip(pairs, got, per_token):
        manual, text = [], prompt
        for ch in cont:  # one byte at a time, each from its own unpadded forward pass
            manual.append(np.log(_next_token_probs(lm, text)[ord(ch)]))
            text += ch
        np.testing.assert_allclose(tokens, manual, atol=1e-4)
        assert total == pytest.approx(sum(manual), abs=1e-4)


def test_packed_candidate_logprobs_equal_logprobs_per_pair(tiny):
    """candidate_logprobs packs each prompt's candidates after it in one row: per (prompt, candidate) the value of
    logprobs, in any batching, for prompts of unequal length and candidates of unequal length; bad rows named."""
    lm, _ = tiny
    prompts = ["the cat sat", "a", "bob likes blue"]
    cands = [[" on the mat.", " red", "zz"], [" red", " fox ran", "."], [" hats.", " x", " on"]]
    flat = lm.logprobs([p for p, row in zip(prompts, cands) for _ in row], [c for row in cands for c in row])
    for batch in (1, 2, 3):
        got = lm.candidate_logprobs(prompts, cands, batch_size=batch)
        assert got.shape == (3, 3) and got.dtype == torch.float64 and not got.requires_grad
        np.testing.assert_allclose(got.numpy().ravel(), flat, atol=1e-4)
    with pytest.raises(ValueError, match=r"one row of candidates per prompt, every row of the same \(non-zero\) length"):
        lm.candidate_logprobs(prompts, cands[:2])
    with pytest.raises(ValueError, match="encodes to no tokens"):
        lm.candidate_logprobs(prompts[:1], [["", " x", " y"]])


def test_hidden_states_are_the_residual_stream_at_the_asked_positions(tiny):
    lm, _ = tiny
    prompts = ["the cat", "a red fox ran", "b"]
    layers = [0, 1, 2]
    last = lm.hidden_states(prompts, layers, positions=-1, batch_size=3)
    assert last.shape == (3, 3, 64) and last.dtype == np.float32
    pair = lm.hidden_states(prompts, layers, positions=[0, -1], batch_size=2)
    assert pair.shape == (3, 3, 2, 64)
    np.testing.assert_allclose(pair[:, :, 1], last, atol=1e-5)
    span = lm.hidden_states(prompts, [2], positions=slice(-3, None))
    assert [s.shape for s in span] == [(1, 3, 64), (1, 3, 64), (1, 2, 64)]  # "b" is BOS + 1 byte
    for prompt, h in zip(prompts, last):  # each prompt alone, straight through the network
        ids = torch.tensor([lm.tokenizer.encode(prompt, prompt=True)])
        with torch.inference_mode():
            x = lm.module.wte(ids) + lm.module.wpe(torch.arange(ids.shape[1]))[None]
            np.testing.assert_allclose(h[0], x[0, -1].numpy(), atol=1e-5)
            logits, hs = lm.module(ids, torch.ones_like(ids), torch.arange(ids.shape[1])[None])
        np.testing.assert_allclose(h[2], hs[2][0, -1].numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="layers .* out of range"):
        lm.hidden_states(prompts, [3])
    with pytest.raises(ValueError, match="position 5 is outside prompt 2"):
        lm.hidden_states(prompts, [0], positions=5)


def test_chat_uses_the_tiny_template_and_the_same_interface(tiny):
    lm, _ = tiny
    msgs = [{"role": "user", "content": "hi"}]
    assert lm.render_chat(msgs) == "<|user|>\nhi\n<|assistant|>\n"
    assert isinstance(lm.chat(msgs, max_new_tokens=5), str)
    assert len(lm.chat([msgs, msgs], max_new_tokens=5)) == 2


def test_a_saved_tiny_model_loads_by_name_with_identical_outputs(tiny, tmp_path):
    lm, _ = tiny
    save_tiny(lm, tmp_path / "tiny-facts")
    again = repro.llm.load("tiny-facts", root=tmp_path)
    prompts = ["the cat", "bob"]
    assert again.logprobs(prompts, [" sat", " likes"]) == lm.logprobs(prompts, [" sat", " likes"])
    assert again.generate(prompts, max_new_tokens=20) == lm.generate(prompts, max_new_tokens=20)
    assert repro.llm.load(str(tmp_path / "tiny-facts")).name == str(tmp_path / "tiny-facts")


def test_lora_resumed_from_a_checkpoint_equals_an_uninterrupted_run(tiny, tmp_path):
    lm, _ = tiny
    save_tiny(lm, tmp_path / "base")
    data = ["the dog sat on the rug.", "a red fox ran home.", "bob likes red hats."]
    cfg = LoraConfig(targets=("qkv", "fc"), rank=4, alpha=8, dropout=0.1, lr=1e-2, steps=6, batch_size=2,
                     save_every=3)
    full = finetune_lora(load_tiny(tmp_path / "base", name="tiny"), data, cfg, tmp_path / "full", seed=3)
    assert [p.name for p in checkpoints(tmp_path / "full")] == ["step-000003", "step-000006"]

    def killed_after_step_4(step, loss):
        if step == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        finetune_lora(load_tiny(tmp_path / "base", name="tiny"), data, cfg, tmp_path / "part", seed=3,
                      on_step=killed_after_step_4)
    assert [p.name for p in checkpoints(tmp_path / "part")] == ["step-000003"]
    resumed = finetune_lora(load_tiny(tmp_path / "base", name="tiny"), data, cfg, tmp_path / "part", seed=3)
    assert resumed.resumed_from == 3
    assert resumed.losses == full.losses  # dropout and batches come from (seed, step), not from history
    a = {k: v for k, v in full.lm.module.state_dict().items() if "lora_" in k}
    b = {k: v for k, v in resumed.lm.module.state_dict().items() if "lora_" in k}
    assert a.keys() == b.keys() and len(a) == 8  # 2 blocks x (qkv, fc) x (A, B)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert loss_on(full.lm, data) < loss_on(load_tiny(tmp_path / "base"), data)
    with pytest.raises(ValueError, match="LoRA targets \\['q_proj'\\] are not modules"):
        finetune_lora(load_tiny(tmp_path / "base"), data, LoraConfig(targets=("q_proj",)), tmp_path / "x", seed=0)
