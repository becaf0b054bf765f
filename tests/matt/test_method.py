"""matt's pieces against hand-worked cases and planted truth: segment alignment, sparsemax and
FOCUS in closed form, the tokenizer extension, and the AIM warm-up on a case whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from repro.methods.tokenizer_transfer import aim, init
from repro.papers.matt import tokens
from repro.papers.matt.corpus import ukrainian_documents


def test_segments_close_where_both_tokenisations_have_a_boundary():
    # "unbelievable": source un|bel|iev|able (ends 2,5,8,12); target unbeliev|able (ends 8,12)
    assert tokens.align_segments([2, 5, 8, 12], [8, 12]) == [(0, 3, 0, 1), (3, 4, 1, 2)]
    # "ab cd": source a|b| c|d (1,2,4,5), target ab| |cd (2,3,5): common ends 2 and 5
    assert tokens.align_segments([1, 2, 4, 5], [2, 3, 5]) == [(0, 2, 0, 1), (2, 4, 1, 3)]
    # identical tokenisations: one token per segment
    assert tokens.align_segments([1, 3, 4], [1, 3, 4]) == [(0, 1, 0, 1), (1, 2, 1, 2), (2, 3, 2, 3)]


def test_segments_refuse_texts_of_different_length():
    with pytest.raises(ValueError, match="different lengths"):
        tokens.align_segments([1, 2], [3])


def test_byte_ends_of_a_real_tokenisation_partition_the_utf8_text():
    src = tokens.train_source_tokenizer(["the cat sat on the mat"] * 20, 300)
    text = "the cat сидить"
    ids = src.encode(text, add_special_tokens=False).ids
    ends = tokens.byte_ends(src, ids)
    assert ends[-1] == len(text.encode("utf-8")) and ends == sorted(ends)


def test_extension_keeps_source_ids_and_shortens_the_new_language():
    docs = ukrainian_documents(150, seed=0)
    src = tokens.train_source_tokenizer(["the cat sat on the mat. " * 5] * 50, 300)
    tgt = tokens.extend_tokenizer(src, docs, 120)
    for t, i in src.get_vocab().items():
        assert tgt.token_to_id(t) == i
    new = tokens.new_token_ids(src, tgt)
    n = src.get_vocab_size()
    assert new == list(range(n, n + len(new))) and 0 < len(new) <= 120
    text = ukrainian_documents(1, seed=9)[0]
    assert tgt.decode(tgt.encode(text).ids) == text
    assert len(tgt.encode(text).ids) < 0.6 * len(src.encode(text).ids)
    # English is cut as before
    assert tgt.encode("the cat sat").ids == src.encode("the cat sat").ids


def test_sparsemax_closed_form():
    np.testing.assert_allclose(init.sparsemax([1.0, 0.5, -1.0]), [0.75, 0.25, 0.0])
    np.testing.assert_allclose(init.sparsemax([3.0, 0.0, 0.0]), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(init.sparsemax([0.2, 0.2]), [0.5, 0.5])


def test_focus_on_a_hand_built_case():
    E = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])  # source rows 0..2
    aux = np.array([[1.0, 0.0], [0.6, 0.8], [-1.0, 0.0], [0.8, 0.6]])  # target ids 0..3; 3 is new
    seen = np.array([True, True, True, True])
    # cosines of new token 3 with overlap 0, 1, 2: 0.8, 0.96, -0.8 -> sparsemax (0.42, 0.58, 0)
    out = init.focus_init(E, [3], [0, 1, 2], aux, seen)
    np.testing.assert_allclose(out[0], [0.42, 0.58], atol=1e-12)
    # an unseen new token falls back to the mean of the source rows
    out = init.focus_init(E, [3], [0, 1, 2], aux, np.array([True, True, True, False]))
    np.testing.assert_allclose(out[0], E.mean(0))


def test_influences_sum_attention_weighted_values_per_segment_pair():
    g = torch.Generator().manual_seed(0)
    A = torch.rand(2, 5, 5, generator=g).tril()
    V = torch.randn(2, 5, 3, generator=g)
    segs = [(1, 2), (2, 4), (4, 5)]
    out = aim.influences(A, V, segs)  # pairs (j, i): (0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)
    expect_21 = A[:, 4, 2:4, None].mul(V[:, 2:4]).sum(1)  # segment 1 on the last token of segment 2
    expect_10 = A[:, 3, 1:2, None].mul(V[:, 1:2]).sum(1)
    expect_11 = A[:, 3, 2:4, None].mul(V[:, 2:4]).sum(1)  # segment 1 on its own last token (token 3)
    torch.testing.assert_close(out[:, 4], expect_21)
    torch.testing.assert_close(out[:, 1], expect_10)
    torch.testing.assert_close(out[:, 2], expect_11)
    assert out.shape == (2, 6, 3)


def test_influences_keep_each_segment_on_its_own_last_token_as_the_reference():
    # the reference's causal mask keeps the diagonal: a one-segment row has one pair, A @ V at its last
    # token summed over the segment; S segments give S(S+1)/2 pairs per head
    g = torch.Generator().manual_seed(4)
    A = torch.rand(3, 4, 4, generator=g).tril()
    V = torch.randn(3, 4, 2, generator=g)
    one = aim.influences(A, V, [(1, 4)])
    torch.testing.assert_close(one[:, 0], (A[:, 3, 1:4, None] * V[:, 1:4]).sum(1))
    assert aim.influences(A, V, [(1, 2), (2, 3), (3, 4)]).shape == (3, 6, 2)


def test_aim_loss_pools_the_squared_errors_of_every_pair_of_the_batch():
    # nn.MSELoss over the concatenated pairs: a row with more pairs weighs more than in a mean of row means
    net, W, rows = _planted()
    rows = [aim.AimRow([0, 5, 6, 7], [0, 5, 6, 7], [(0, 1, 0, 1)]),  # one segment: 1 pair
            aim.AimRow([0, 5, 6, 7], [0, 5, 6, 7], [(0, 1, 0, 1), (1, 2, 1, 2), (2, 3, 2, 3)])]  # 6 pairs
    targets = [aim.teacher_influences(net, W, r, 2) for r in rows]
    shifted = W + 0.3 * torch.randn(W.shape, generator=torch.Generator().manual_seed(5))
    student = [aim.influences(*(t[0] for t in net.attention(r.tgt, shifted, 2)), r.tgt_segments) for r in rows]
    sq = [(s - t).pow(2) for s, t in zip(student, targets)]
    pooled = torch.cat([e.reshape(-1) for e in sq]).mean()
    row_means = torch.stack([e.mean() for e in sq]).mean()
    loss = aim.aim_loss(net, shifted, rows, targets, 2)
    torch.testing.assert_close(loss, pooled)
    assert abs(float(pooled - row_means)) > 1e-3 * float(pooled)


def _planted():
    """A tiny model whose last 12 token rows play the new tokens: the right answer is known."""
    from repro.llm.tiny import TinyConfig, TinyGPT

    cfg = TinyConfig(n_layer=3, n_head=2, d_model=32, context=48, vocab_size=60)
    model = TinyGPT(cfg)
    model.init_weights(torch.Generator().manual_seed(1))
    with torch.no_grad():
        model.wte.weight.mul_(20.0)  # embeddings that dominate the positions, as in a trained model
    net = aim.TinyNet(model)
    g = torch.Generator().manual_seed(2)
    rows = []
    for _ in range(16):
        ids = torch.randint(60, (30,), generator=g).tolist()
        ends = list(range(1, 31))
        rows.append(aim.AimRow([0, *ids], [0, *ids], tokens.align_segments(ends, ends)))
    W = net.source_embeddings.detach()
    return net, W, rows


def test_aim_loss_is_zero_at_the_planted_answer_and_the_warm_up_moves_toward_it():
    net, W, rows = _planted()
    W_src, truth = W[:-12], W[-12:]
    targets = [aim.teacher_influences(net, W, r, 2) for r in rows]
    assert float(aim.aim_loss(net, W, rows, targets, 2)) == 0.0
    start = W_src.mean(0, keepdim=True).repeat(12, 1)
    assert float(aim.aim_loss(net, torch.cat([W_src, start]), rows, targets, 2)) > 0.0
    new, losses, n_tokens = aim.warm_up(net, W_src, start, rows, n_layers=2, steps=60, lr=0.05, batch_size=4,
                                        generator=torch.Generator().manual_seed(3), teacher_W=W)
    assert n_tokens == 60 * 4 * 31
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:5])
    assert torch.linalg.norm(new - truth) < 0.7 * torch.linalg.norm(start - truth)


def test_tiny_attention_reads_the_last_of_the_first_n_layers():
    # n_layers = k reads block k - 1 (the reference's attentions[n_layers - 1]); 0 and depth + 1 are refused
    net, W, rows = _planted()
    ids = rows[0].src
    A1, V1 = net.attention(ids, W, 1)
    x = F.embedding(ids, W) + net.model.wpe(torch.arange(ids.shape[1]))[None]
    block = net.model.blocks[0]
    C = x.shape[-1]
    v = block.attn.qkv(block.ln1(x)).split(C, dim=2)[2].view(1, -1, 2, C // 2).transpose(1, 2)
    torch.testing.assert_close(V1, v)
    torch.testing.assert_close(A1.sum(-1), torch.ones(1, 2, ids.shape[1]))
    for bad in (0, 4):
        with pytest.raises(ValueError, match="n_layers"):
            net.attention(ids, W, bad)


def test_hf_attention_matches_the_full_models_attentions_and_cached_values_at_layer_n_minus_1():
    # an independent reading, the reference's: the full model's output_attentions[n - 1] and the value
    # states of layer n - 1 in its key-value cache (shared heads repeated to every query head)
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      attn_implementation="eager")
    model = LlamaForCausalLM(cfg).eval()
    net = aim.HFNet(model)
    ids = torch.tensor([[1, 7, 9, 3, 22, 41]])
    W = net.source_embeddings.detach()
    with torch.no_grad():
        full = model(input_ids=ids, output_attentions=True, use_cache=True)
        A, V = net.attention(ids, W, 3)
    torch.testing.assert_close(A, full.attentions[2])
    cache = full.past_key_values
    values = cache.layers[2].values if hasattr(cache, "layers") else cache[2][1]
    torch.testing.assert_close(V, values.repeat_interleave(2, dim=1))
    assert len(net.model.model.layers) == 4  # the truncation is undone


def test_aim_batches_are_shuffled_passes_without_replacement():
    out = aim.batches(10, 4, 7, torch.Generator().manual_seed(0))
    assert [len(b) for b in out] == [4, 4, 2, 4, 4, 2, 4]
    assert sorted(sum(out[:3], [])) == list(range(10)) and sorted(sum(out[3:6], [])) == list(range(10))
    assert sum(out[:3], []) != sum(out[3:6], [])  # a new shuffle each pass


def test_warm_up_step_is_adamw_with_weight_decay_after_clipping_the_gradient_norm(monkeypatch):
    # one warm-up step against a hand-written step: clip the gradient norm, then AdamW (decay 0.01);
    # the reference's clip is 1.0, lowered here so that this small loss's gradient is clipped
    assert aim.CLIP_NORM == 1.0 and aim.WEIGHT_DECAY == 0.01
    clip = 1e-6
    monkeypatch.setattr(aim, "CLIP_NORM", clip)
    net, W, rows = _planted()
    W_src = W[:-12]
    start = W_src.mean(0, keepdim=True).repeat(12, 1)
    lr, teacher = 0.01, W
    new, _, _ = aim.warm_up(net, W_src, start, rows, n_layers=2, steps=1, lr=lr, batch_size=4,
                            generator=torch.Generator().manual_seed(3), teacher_W=teacher)
    pick = aim.batches(len(rows), 4, 1, torch.Generator().manual_seed(3))[0]
    p = start.clone().requires_grad_(True)
    targets = [aim.teacher_influences(net, teacher, rows[k], 2) for k in pick]
    aim.aim_loss(net, torch.cat([W_src, p]), [rows[k] for k in pick], targets, 2).backward()
    g = p.grad
    assert float(g.norm()) > 10 * clip  # the clip is active
    g = g * (clip / (g.norm() + 1e-6))  # torch.nn.utils.clip_grad_norm_'s coefficient
    m, v = 0.1 * g, 0.001 * g * g  # Adam's moments after one step, bias-corrected below
    expect = start * (1 - lr * 0.01) - lr * (m / 0.1) / ((v / 0.001).sqrt() + 1e-8)
    torch.testing.assert_close(new, expect, rtol=1e-6, atol=1e-7)
    unclipped = start * (1 - lr * 0.01) - lr * p.grad / (p.grad.abs() + 1e-8)
    assert float((new - unclipped).abs().max()) > 1e-4  # eps 1e-8 against a clipped gradient tells them apart
    assert float((new - (start - lr * g.sign())).abs().max()) > 1e-6  # the decay is visible
