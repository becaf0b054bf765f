"""Planted structure of the m2le sequences recovered by HIM; each baseline where its behaviour is known."""

import numpy as np
import pytest
import torch

from repro.methods.merging import elementwise_modulation
from repro.papers.m2le.experiment import (
    METHODS,
    TrainConfig,
    _train_task,
    build_sequence,
    pretrain_backbone,
    run_method,
)
from repro.nn.lora_backbone import BackboneConfig, LoraMLP, fisher_diag, local_labels
from repro.papers.m2le.synth import make_sequence
from tests.m2le.fisher_loop import fisher_by_loop

CFG = {
    "sequences": {"blocks": {"n_tasks": 3, "n_blocks": 4, "block_dim": 6, "n_per_task": 300}},
    "backbone": {"kind": "mlp", "hidden": 16, "rank": 2, "lora_alpha": 2.0, "pretrain_epochs": 5},
    "train": {"epochs": 2, "n_fisher": 60},
}


@pytest.fixture(scope="module")
def blocks():
    seq = build_sequence(CFG, "blocks", 0)
    state, _ = pretrain_backbone(CFG, seq, 1)
    return seq, state


def test_fisher_lives_on_the_planted_blocks_and_him_keeps_private_columns(blocks):
    seq, state = blocks
    model = LoraMLP(seq.n_features, 10, BackboneConfig(**CFG["backbone"]))
    model.load_state_dict(state)
    bd = 6
    fishers = [fisher_diag(model, t.x_train[:60], t.y_train[:60], t.classes)[0] for t in seq.tasks]
    cols = fishers[1].sum(0).reshape(4, bd).sum(1)  # first layer, per input block
    # task 1 reads the shared block 0 and its private block 2: zero curvature on the blocks it never sees
    assert cols[0] > 0 and cols[2] > 0 and cols[1] == 0 and cols[3] == 0
    m = elementwise_modulation(fishers[1], fishers[0], 0.5, damping=0.0)
    private = m[:, 2 * bd : 3 * bd][fishers[1][:, 2 * bd : 3 * bd] > 0]
    shared = m[:, :bd][fishers[1][:, :bd] > 0]
    assert torch.allclose(private, torch.ones_like(private))  # no earlier task uses block 2: keep it whole
    assert float(shared.mean()) < 0.9  # task 0 also curves the shared block: the merge shrinks it there


def test_fisher_matches_a_loop_over_examples(blocks):
    seq, state = blocks
    model = LoraMLP(seq.n_features, 10, BackboneConfig(**CFG["backbone"]))
    model.load_state_dict(state)
    task = seq.tasks[0]
    x, y = task.x_train[:8], task.y_train[:8]
    fast = fisher_diag(model, x, y, task.classes)
    loop = fisher_by_loop(model, x, y, task.classes)
    for a, b in zip(fast, loop):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-8)


def test_every_method_runs_and_the_first_task_is_paired_across_methods(blocks):
    seq, state = blocks
    res = {m: np.asarray(run_method(CFG, seq, state, m, 7)["acc"]) for m in METHODS.names()}
    assert np.isnan(res["joint"][0]).all() and not np.isnan(res["joint"][-1]).any()
    for m, acc in res.items():
        assert np.all((acc[-1] >= 0) & (acc[-1] <= 1)), m
    # same LoRA init and batch order for task 0 whatever the method: task 0's accuracy after task 0 is identical
    # for every merge that keeps the whole first update (seq, olora and ewc have nothing to protect yet, P&M's
    # alpha is 1 with no previous curvature, and HIM's m is 1 too)
    for m in ("olora", "ewc", "pm", "him"):
        assert res[m][0, 0] == pytest.approx(res["seq"][0, 0]), m


def test_olora_penalty_makes_the_new_a_orthogonal_to_the_old():
    seq = make_sequence("blocks", 2, 3, n_blocks=3, block_dim=4, n_per_task=200)
    state, _ = pretrain_backbone(CFG, seq, 2)
    model = LoraMLP(seq.n_features, 10, BackboneConfig(**CFG["backbone"]))
    model.load_state_dict(state)
    model.freeze_backbone()
    prev = [torch.randn_like(a) for a in model.A]

    def overlap(lam):
        tc = TrainConfig(epochs=5, lambda_orth=lam)
        _train_task(model, [seq.tasks[0]], METHODS.create("olora"), tc, 5, [prev], None, [[] for _ in model.A])
        return sum(float((p @ a.T).abs().sum()) for p, a in zip(prev, model.A))

    assert overlap(5.0) < 0.5 * overlap(0.0)


def test_bad_inputs_name_what_is_wrong():
    with pytest.raises(ValueError, match="unknown m2le sequence 'cifar'"):
        make_sequence("cifar", 3, 0)
    with pytest.raises(ValueError, match="split_digits: n_tasks must be 2..5"):
        make_sequence("split_digits", 10, 0)
    with pytest.raises(ValueError, match="unknown m2le method 'lwf'"):
        METHODS.create("lwf")
    with pytest.raises(ValueError, match="outside the task's classes"):
        local_labels(torch.tensor([3]), (0, 1))


def test_own_and_merged_optima_agree_until_an_update_has_been_shrunk(blocks):
    # Task 0 has no earlier curvature, so alpha = m = 1 and theta_0* is the merged weight after task 0: the pull
    # g = h_0 ⊙ (theta_0* - theta_0) of task 1 is 0 and both forms merge task 1 alike. From task 2 on the pull of
    # task 1 (shrunk by its merge) is not 0, and the forms part.
    seq, state = blocks
    runs = {}
    for optima in ("own", "merged"):
        cfg = {**CFG, "train": {**CFG["train"], "previous_optima": optima}}
        runs[optima] = run_method(cfg, seq, state, "him", 7)
    own, merged = (np.asarray(runs[k]["acc"]) for k in ("own", "merged"))
    np.testing.assert_array_equal(own[:2], merged[:2])
    assert runs["own"]["alphas"][:2] == pytest.approx(runs["merged"]["alphas"][:2], rel=1e-12)
    assert runs["own"]["alphas"][2] != pytest.approx(runs["merged"]["alphas"][2], rel=1e-6)
    assert all(0.0 <= a <= 1.0 for a in runs["own"]["alphas"])
    with pytest.raises(ValueError, match="previous_optima must be one of"):
        run_method({**CFG, "train": {**CFG["train"], "previous_optima": "mine"}}, seq, state, "pm", 7)
