"""munkey: key deletion (exact equivalence, planted canaries), the oracles, the kNN baseline, bad input."""

import numpy as np
import pytest
import torch

from repro.methods.munkey import (
    MemoryConfig,
    MemoryModel,
    PlainModel,
    knn_predict,
    nearest_keys,
    predict_logits,
    train_model,
)
from repro.papers.munkey.experiment import run_unit
from repro.papers.munkey.synth import forget_indices, make_regime

CFG = {"forget_sets": {"random10": {"kind": "random", "fraction": 0.1}}, "baselines": ["finetune", "scrub", "salun"],
       "model": {"epochs": 25}}


@pytest.fixture(scope="module")
def unit():
    torch.set_num_threads(1)
    return run_unit(CFG, "digits", "random10", data_seed=3, train_seed=4)


@pytest.fixture(scope="module")
def digits_memory():
    torch.set_num_threads(1)
    reg = make_regime("digits", 5)
    cfg = MemoryConfig(epochs=25)
    torch.manual_seed(0)
    return reg, train_model(MemoryModel(reg.x_train, reg.n_classes, cfg), reg.x_train, reg.y_train, cfg, 0)


def test_deleted_keys_are_never_read():
    keys = torch.randn(50, 8)
    model = MemoryModel(keys, 3, MemoryConfig(k=4))
    model.delete(np.arange(10))
    idx = nearest_keys(keys[:10], model.keys, model.alive, 4)
    assert not np.isin(idx.numpy(), np.arange(10)).any()
    # an undeleted instance reads its own key (cosine similarity 1)
    assert (nearest_keys(keys[10:], model.keys, model.alive, 4) == torch.arange(10, 50)[:, None]).any(1).all()


def test_deletion_equals_a_model_never_given_the_keys(digits_memory):
    """After deletion the prediction on every image is bit for bit that of the same weights with the
    forgotten entries never put in memory (the memory model's forgetting is exact, by construction)."""
    reg, trained = digits_memory
    forget = forget_indices("random", reg.y_train, 7, fraction=0.1)
    never = trained.without(forget)
    deleted = MemoryModel(trained.keys, reg.n_classes, trained.cfg)
    deleted.load_state_dict(trained.state_dict())
    deleted.delete(forget)
    for q in (reg.x_train[forget], reg.x_test):
        assert torch.equal(predict_logits(deleted, q), predict_logits(never, q))
    # and deletion matters: before it, the forget set read its own entries
    assert not torch.equal(predict_logits(trained, reg.x_train[forget]), predict_logits(never, reg.x_train[forget]))


def _canary_rates(reg, trained):
    """Share of training canaries predicted with their canary label: before, after deleting every canary's key,
    by the image-only pathway, and (the floor) of test canaries, whose labels no model saw."""
    model = MemoryModel(trained.keys, reg.n_classes, trained.cfg)
    model.load_state_dict(trained.state_dict())
    canaries = np.flatnonzero(reg.canary_train)
    def hit(q, y, **kw):
        return float((predict_logits(model, q, **kw).argmax(1) == y).float().mean())
    rates = {"before": hit(reg.x_train[canaries], reg.y_train[canaries]),
             "weights": hit(reg.x_train[canaries], reg.y_train[canaries], image_only=True)}
    model.delete(canaries)
    return rates | {"after": hit(reg.x_train[canaries], reg.y_train[canaries]),
                    "floor": hit(reg.x_test[reg.canary_test], reg.y_test[reg.canary_test])}


def test_planted_canaries_live_in_memory_and_deletion_removes_most_of_them(digits_memory):
    """Canary labels (a wrong label drawn per image) are predicted only by memorising the image: the memory
    model predicts them, its weights alone mostly do not, and deleting the canaries' keys removes most of it."""
    rates = _canary_rates(*digits_memory)
    assert rates["before"] > 0.9
    assert rates["weights"] < 0.3
    assert rates["after"] < 0.5 * rates["before"]


@pytest.mark.xfail(strict=True, reason="known leak of the K = 4 read: in training an instance also writes its "
                   "neighbours' value tokens, which keep part of its label after its key is deleted "
                   "(repro.methods.munkey docstring; digits seed 5: 0.32 of canaries vs a floor of 0.04)")
def test_planted_canaries_vanish_to_the_floor_with_their_keys(digits_memory):
    rates = _canary_rates(*digits_memory)
    assert rates["after"] <= rates["floor"] + 0.05


def test_deletion_changes_no_weight_and_the_oracles_never_predict_a_canary(unit):
    m = unit["methods"]
    assert unit["n_forget_canaries"] > 0
    assert m["munkey"]["weights_changed"] == 0.0
    assert m["oracle"]["canary_memorised"] == 0.0 and m["oracle_memory"]["canary_memorised"] == 0.0
    assert m["oracle"]["gap_plain"] == 0.0 and m["oracle_memory"]["gap_own"] == 0.0
    assert set(m) == {"original", "oracle", "finetune", "scrub", "salun", "munkey", "oracle_memory", "knn"}
    assert all(0 <= v["mia_shadow"] <= 1 for v in m.values())


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


def test_plain_model_has_the_memory_models_weights():
    cfg = MemoryConfig()
    plain, memory = PlainModel(32, 5, cfg), MemoryModel(torch.randn(40, 32), 5, cfg)
    def n(m):
        return sum(p.numel() for name, p in m.named_parameters() if name not in ("values", "null"))
    assert n(plain) == n(memory)


@pytest.mark.parametrize("regime", ["natural", "finegrained", "medical"])
def test_regimes_are_deterministic_and_balanced(regime):
    a, b = make_regime(regime, 2, n_images=200), make_regime(regime, 2, n_images=200)
    assert torch.equal(a.x_train, b.x_train) and torch.equal(a.y_train, b.y_train)
    assert a.x_train.shape[1] == 256 and a.n_classes in (5, 10)
    counts = np.bincount(np.r_[a.y_train.numpy(), a.y_test.numpy()], minlength=a.n_classes)
    assert counts.min() > 0
    assert 0 < a.canary_train.mean() < 0.2


def test_forget_sets_and_bad_input():
    y = torch.arange(100) % 10
    assert len(forget_indices("random", y, 0, fraction=0.1)) == 10
    assert set(y[forget_indices("class", y, 0, forget_class=3)].tolist()) == {3}
    with pytest.raises(ValueError, match="fraction"):
        forget_indices("random", y, 0, fraction=1.5)
    with pytest.raises(ValueError, match="forget-set kind 'all'"):
        forget_indices("all", y, 0)
    with pytest.raises(ValueError, match="regime 'cifar'"):
        make_regime("cifar", 0)
    with pytest.raises(ValueError, match="canary_frac"):
        make_regime("digits", 0, canary_frac=1.0)
    with pytest.raises(ValueError, match="needs the path"):
        make_regime("remote", 0)
    with pytest.raises(ValueError, match="live keys"):
        nearest_keys(torch.randn(1, 3), torch.randn(5, 3), torch.tensor([True, True, False, False, False]), 4)
    model = MemoryModel(torch.randn(10, 4), 2, MemoryConfig(k=2))
    with pytest.raises(IndexError, match="memory holds 10"):
        model.delete(np.array([3, 10]))
    assert bool(model.alive.all())  # nothing partial
    with pytest.raises(ValueError, match="its own entries"):
        train_model(model, torch.randn(5, 4), torch.zeros(5, dtype=torch.long), MemoryConfig(epochs=1), 0)


def test_remote_image_folder_is_checked_and_read(tmp_path):
    """A class-per-folder archive fetched by sha256 becomes the remote regime; a wrong digest leaves nothing."""
    from repro.data import fixtures
    from repro.data.image_folder import fetch_image_set

    folder = fixtures.image_folder(tmp_path / "set", ("cat", "dog", "eel"), per_class=12, size=20)
    archive = fixtures.tar_gz(folder, tmp_path / "set.tar.gz")
    digest = fixtures.sha256(archive)
    with pytest.raises(Exception, match="sha256"):
        fetch_image_set(archive.as_uri(), "0" * 64, tmp_path / "bad.npz", size=16)
    assert not (tmp_path / "bad.npz").exists()
    out = fetch_image_set(archive.as_uri(), digest, tmp_path / "remote.npz", size=16)
    reg = make_regime("remote", 0, path=str(out), canary_frac=0.1)
    assert reg.n_classes == 3 and len(reg.y_train) + len(reg.y_test) == 36
    assert reg.x_train.shape[1] == 256
