"""munkey: key deletion, the oracle on planted canary labels, the kNN baseline, the MIA, bad input."""

import numpy as np
import pytest
import torch

from repro.methods.munkey import MemoryConfig, MemoryModel, knn_predict, nearest_keys
from repro.methods.unlearning import loss_mia_auc
from repro.papers.munkey.experiment import run_unit
from repro.papers.munkey.synth import forget_indices, make_regime

CFG = {"forget_sets": {"random10": {"kind": "random", "fraction": 0.1}}, "baselines": ["finetune", "scrub"],
       "model": {"epochs": 25}}


@pytest.fixture(scope="module")
def unit():
    torch.set_num_threads(1)
    return run_unit(CFG, "digits", "random10", data_seed=3, train_seed=4)


def test_deleted_keys_are_never_read():
    keys = torch.randn(50, 8)
    model = MemoryModel(keys, 3, MemoryConfig(k=4))
    model.delete(np.arange(10))
    idx = nearest_keys(keys[:10], model.keys, model.alive, 4)
    assert not np.isin(idx.numpy(), np.arange(10)).any()
    # an undeleted instance reads its own key first (cosine similarity 1)
    assert (nearest_keys(keys[10:], model.keys, model.alive, 4)[:, 0] == torch.arange(10, 50)).all()


def test_deletion_changes_no_weight_and_the_oracle_never_predicts_a_canary(unit):
    m = unit["methods"]
    assert unit["n_forget_canaries"] > 0
    assert m["munkey"]["weights_changed"] == 0.0
    # planted truth: the untouched model memorised every canary, the retrain oracles none of them
    assert m["original"]["canary_memorised"] == 1.0
    assert m["oracle"]["canary_memorised"] == 0.0 and m["oracle_memory"]["canary_memorised"] == 0.0
    assert m["oracle"]["gap_plain"] == 0.0 and m["oracle_memory"]["gap_own"] == 0.0


def test_knn_deletion_removes_the_instance_signal():
    reg = make_regime("digits", 5)
    canaries = np.flatnonzero(reg.canary_train)
    alive = torch.ones(len(reg.y_train), dtype=torch.bool)
    before = knn_predict(reg.x_train, reg.y_train, alive, reg.x_train[canaries], 1, 10).argmax(1)
    assert (before == reg.y_train[canaries]).all()  # 1-NN reads the instance itself
    alive[torch.as_tensor(canaries)] = False
    after = knn_predict(reg.x_train, reg.y_train, alive, reg.x_train[canaries], 1, 10).argmax(1)
    # a wrong label drawn among 9 classes: a neighbour of the same digit shares it with probability ~1/9
    assert (after == reg.y_train[canaries]).float().mean() < 0.3


def test_loss_mia_auc_closed_forms():
    assert loss_mia_auc(np.array([0.1, 0.2]), np.array([1.0, 2.0])) == 1.0
    assert loss_mia_auc(np.array([3.0]), np.array([1.0])) == 0.0
    assert loss_mia_auc(np.array([1.0, 1.0]), np.array([1.0])) == 0.5


def test_forget_sets_and_bad_input():
    y = torch.arange(100) % 10
    assert len(forget_indices("random", y, 0, fraction=0.1)) == 10
    assert set(y[forget_indices("class", y, 0, forget_class=3)].tolist()) == {3}
    with pytest.raises(ValueError, match="fraction"):
        forget_indices("random", y, 0, fraction=1.5)
    with pytest.raises(ValueError, match="regime 'cifar'"):
        make_regime("cifar", 0)
    with pytest.raises(ValueError, match="live keys"):
        nearest_keys(torch.randn(1, 3), torch.randn(5, 3), torch.tensor([True, True, False, False, False]), 4)
