"""Recall@K (repro.metrics.retrieval) against similarity matrices worked by hand, ties included."""

import numpy as np
import pytest

from repro.metrics.retrieval import retrieval_ranks, retrieval_recall

# 3 images; captions 0,1 -> image 0, caption 2 -> image 1, captions 3,4 -> image 2
CAPTION_IMAGE = np.array([0, 0, 1, 2, 2])
SIM = np.array([
    #  c0   c1   c2   c3   c4
    [0.9, 0.1, 0.5, 0.2, 0.3],  # image 0: best own 0.9, no wrong caption >= 0.9 -> rank 1
    [0.4, 0.6, 0.6, 0.7, 0.0],  # image 1: own 0.6; wrong >= 0.6: c1 (tie, counts against), c3 -> rank 3
    [0.2, 0.8, 0.1, 0.3, 0.5],  # image 2: best own 0.5; wrong >= 0.5: c1 -> rank 2
])


def test_text_retrieval_ranks_by_hand():
    tr, _ = retrieval_ranks(SIM, CAPTION_IMAGE)
    np.testing.assert_array_equal(tr, [1, 3, 2])


def test_image_retrieval_ranks_by_hand():
    _, ir = retrieval_ranks(SIM, CAPTION_IMAGE)
    # c0: own image 0 sim 0.9, others 0.4, 0.2 -> 1
    # c1: own image 0 sim 0.1, others 0.6, 0.8 -> 3
    # c2: own image 1 sim 0.6, others 0.5, 0.1 -> 1
    # c3: own image 2 sim 0.3, others 0.2, 0.7 -> 2
    # c4: own image 2 sim 0.5, others 0.3, 0.0 -> 1
    np.testing.assert_array_equal(ir, [1, 3, 1, 2, 1])


def test_recall_at_k_by_hand():
    r = retrieval_recall(SIM, CAPTION_IMAGE, ks=(1, 2, 3))
    assert r["TR@1"] == pytest.approx(100 / 3)
    assert r["TR@2"] == pytest.approx(200 / 3)
    assert r["TR@3"] == pytest.approx(100.0)
    assert r["IR@1"] == pytest.approx(60.0)
    assert r["IR@2"] == pytest.approx(80.0)
    assert r["IR@3"] == pytest.approx(100.0)
    assert r["mR"] == pytest.approx(np.mean([100 / 3, 200 / 3, 100, 60, 80, 100]))


def test_all_ties_are_pessimistic():
    # a constant matrix: every wrong item ties with the correct one and is ranked above it
    sim = np.ones((4, 4))
    tr, ir = retrieval_ranks(sim, np.arange(4))
    np.testing.assert_array_equal(tr, [4, 4, 4, 4])
    np.testing.assert_array_equal(ir, [4, 4, 4, 4])
    r = retrieval_recall(sim, np.arange(4), ks=(1, 3, 4))
    assert (r["TR@1"], r["TR@3"], r["TR@4"]) == (0.0, 0.0, 100.0)


def test_tie_among_own_captions_does_not_hurt():
    # two captions of image 0 tie with each other: only wrong items count in the rank
    sim = np.array([[0.5, 0.5, 0.1], [0.2, 0.3, 0.9]])
    tr, _ = retrieval_ranks(sim, np.array([0, 0, 1]))
    np.testing.assert_array_equal(tr, [1, 1])


def test_recall_is_invariant_to_a_common_permutation_of_captions():
    rng = np.random.default_rng(0)
    sim = rng.normal(size=(20, 60))
    owner = np.repeat(np.arange(20), 3)
    perm = rng.permutation(60)
    assert retrieval_recall(sim, owner) == retrieval_recall(sim[:, perm], owner[perm])


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="shape"):
        retrieval_ranks(np.zeros((2, 3)), np.array([0, 1]))
    with pytest.raises(ValueError, match="at least one caption"):
        retrieval_ranks(np.zeros((3, 2)), np.array([0, 1]))
