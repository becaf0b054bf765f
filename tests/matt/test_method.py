"""matt's pieces against hand-worked cases and planted truth: segment alignment, sparsemax and
FOCUS in closed form, the tokenizer extension, and the AIM warm-up on a case whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.papers.matt import aim, init, tokens
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
    out = aim.influences(A, V, segs)  # pairs (j, i): (1, 0), (2, 0), (2, 1)
    expect_21 = A[:, 4, 2:4, None].mul(V[:, 2:4]).sum(1)  # segment 1 on the last token of segment 2
    expect_10 = A[:, 3, 1:2, None].mul(V[:, 1:2]).sum(1)
    torch.testing.assert_close(out[:, 2], expect_21)
    torch.testing.assert_close(out[:, 0], expect_10)
    assert out.shape == (2, 3, 3)


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
    targets = [aim.teacher_influences(net, W, r, 1) for r in rows]
    assert float(aim.aim_loss(net, W, rows, targets, 1)) == 0.0
    start = W_src.mean(0, keepdim=True).repeat(12, 1)
    assert float(aim.aim_loss(net, torch.cat([W_src, start]), rows, targets, 1)) > 0.0
    new, losses, n_tokens = aim.warm_up(net, W_src, start, rows, layer=1, steps=60, lr=0.05, batch_size=4,
                                        generator=torch.Generator().manual_seed(3), teacher_W=W)
    assert n_tokens == 60 * 4 * 31
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:5])
    assert torch.linalg.norm(new - truth) < 0.7 * torch.linalg.norm(start - truth)
