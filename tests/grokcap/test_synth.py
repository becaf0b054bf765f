"""Modular arithmetic data: complete tables, split sizes, random-label twins of equal entropy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.papers.grokcap.synth import (label_entropy_bits, modular_table, random_label_like, random_sequences,
                                         seed_dataset, split, task_data)


@pytest.mark.parametrize("operation, p", [("div", 23), ("add", 23), ("div", 47), ("add", 5)])
def test_every_pair_appears_exactly_once(operation, p):
    data = modular_table(p, operation)
    pairs = {(int(a), int(b)) for a, b in data.x[:, [0, 2]]}
    expected = {(a, b) for a in range(p) for b in range(1 if operation == "div" else 0, p)}
    assert len(data) == len(expected) and pairs == expected  # no pair twice, none missing
    assert np.all(data.x[:, 1] == p) and np.all(data.x[:, 3] == p + 1)


@pytest.mark.parametrize("p", [7, 23])
def test_targets_follow_the_operation(p):
    div = modular_table(p, "div")
    a, b, c = div.x[:, 0], div.x[:, 2], div.y
    assert np.all((c * b) % p == a)  # c = a / b  <=>  c b = a (mod p)
    add = modular_table(p, "add")
    assert np.all((add.x[:, 0] + add.x[:, 2]) % p == add.y)


@pytest.mark.parametrize("fraction", [0.3, 0.5, 0.8])
def test_split_sizes_partition_and_seed(fraction):
    data = modular_table(23, "div")
    train, val = split(data, fraction, seed=3)
    assert len(train) == round(fraction * len(data)) and len(train) + len(val) == len(data)
    rows = {tuple(r) for r in train.x} | {tuple(r) for r in val.x}
    assert len(rows) == len(data)  # disjoint and covering
    again, _ = split(data, fraction, seed=3)
    other, _ = split(data, fraction, seed=4)
    assert np.array_equal(again.x, train.x) and not np.array_equal(other.x, train.x)


def test_split_rejects_bad_fraction():
    with pytest.raises(ValueError, match="train_fraction"):
        split(modular_table(7, "add"), 1.0, seed=0)


def test_bad_prime_and_operation_are_named():
    with pytest.raises(ValueError, match="prime"):
        modular_table(21, "add")
    with pytest.raises(ValueError, match="operation"):
        modular_table(23, "pow")


def test_permuted_twin_has_equal_size_and_label_entropy_but_no_rule():
    train, _ = split(modular_table(47, "div"), 0.5, seed=1)
    twin = random_label_like(train, seed=2, labels="permute")
    assert np.array_equal(twin.x, train.x)
    assert np.array_equal(np.sort(twin.y), np.sort(train.y))  # same histogram
    assert label_entropy_bits(twin.y) == pytest.approx(label_entropy_bits(train.y), abs=1e-12)
    # the rule is gone: a random permutation keeps about 1/p of the labels (here 1081 / 47 = 23);
    # the count is close to Poisson(23), so 60 is more than 7 sd away
    assert np.sum(twin.y == train.y) < 60


def test_uniform_labels_have_entropy_log2_p():
    p, n = 23, 20_000
    train = modular_table(p, "add").subset(np.arange(529).repeat(40)[:n])
    twin = random_label_like(train, seed=0, labels="uniform")
    # plug-in entropy of n uniform draws over p classes is biased low by about (p - 1) / (2 n ln 2)
    # = 8e-4 bits, with sd well under 1e-2 bits at n = 20,000
    assert label_entropy_bits(twin.y) == pytest.approx(math.log2(p), abs=0.01)
    seqs = random_sequences(n, p, seed=1)
    assert label_entropy_bits(seqs.y) == pytest.approx(math.log2(p + 2), abs=0.01)
    assert seqs.x.max() == p + 1 and seqs.x.min() == 0


def test_task_data_shares_the_split_between_modular_and_random_when_permuted():
    arrays = seed_dataset(p=23, operation="div", train_fraction=0.5, seed=9, labels="permute")
    train, val = task_data("modular", arrays)
    twin, none = task_data("random", arrays)
    assert none is None and val is not None and np.array_equal(twin.x, train.x)
    assert np.array_equal(np.sort(twin.y), np.sort(train.y)) and not np.array_equal(twin.y, train.y)
    cap, _ = task_data("capacity", arrays, n_capacity=100)
    assert len(cap) == 100 and cap.n_tokens == 25
    with pytest.raises(ValueError, match="task"):
        task_data("lookup", arrays)
