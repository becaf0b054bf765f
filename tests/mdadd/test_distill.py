"""Distillation methods (repro.methods.distill) on planted feature data, no encoders."""

import numpy as np
import pytest
import torch

from repro.config import from_dict
from repro.methods.distill import DISTILLERS, DistilledSet, distill, standardised
from repro.methods.distill.baselines import herding_select
from repro.methods.distill.core import sample_real_pairs
from repro.methods.distill.features import SplitFeatures
from repro.methods.distill.mdadd import MDADDConfig, ModelQueue, distill_mdadd, socm_loss
from repro.methods.distill.student import StudentConfig, make_student
from repro.papers.mdadd.grid import DISTILL_BLOCKS, distill_params
from repro.seeding import job_seed

DX, DT = 48, 24
STUDENT = {"embed_dim": 8, "image_hidden": 16, "projection": "asymmetric", "temperature": 0.1}
CFG = {"student": STUDENT,
       "distill": {"mdadd": {"iterations": 40, "lr": 0.02, "real_batch": 64, "queue_size": 3, "stagger": 5,
                             "model_lr": 0.001, "lam": 1.0},
                   "covmatch": {},
                   "lors": {"iterations": 4, "rank": 2, "experts": 2, "expert_steps": 12, "checkpoint_every": 3,
                            "syn_steps": 2, "expert_span": 1, "max_start": 3, "real_batch": 32}}}


@pytest.fixture(scope="module")
def train():
    """Planted pairs: a 5-d latent scene drives both modalities; 2 captions per image."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(150, 5))
    image = z @ rng.normal(size=(5, DX)) + 0.3 * rng.normal(size=(150, DX))
    owner = np.repeat(np.arange(150), 2)
    text = z[owner] @ rng.normal(size=(5, DT)) + 0.3 * rng.normal(size=(300, DT))
    split = SplitFeatures(image=image.astype(np.float32), text=text.astype(np.float32), caption_image=owner)
    return standardised(split)[0]


@pytest.mark.parametrize("method", ["random", "herding", "covmatch", "lors", "mdadd_noqueue", "mdadd"])
@pytest.mark.parametrize("n", [5, 12])
def test_distilled_set_has_n_pairs_in_feature_space(train, method, n):
    dset = distill(method, train, n, CFG, seed=1)
    assert len(dset) == n
    assert dset.image.shape == (n, DX) and dset.text.shape == (n, DT)
    assert np.isfinite(dset.image).all() and np.isfinite(dset.text).all()


def test_full_returns_every_real_pair(train):
    dset = distill("full", train, 0, CFG, seed=1)
    x, t = train.pairs()
    np.testing.assert_array_equal(dset.image, x)
    np.testing.assert_array_equal(dset.text, t)


def test_unknown_method_is_named():
    assert "mdadd" in DISTILLERS and "lors" in DISTILLERS
    with pytest.raises(ValueError, match="unknown distillation method 'mtt'"):
        distill("mtt", SplitFeatures(np.zeros((2, 3), np.float32), np.zeros((2, 2), np.float32), np.arange(2)), 1, CFG, 0)


def test_a_misspelt_config_key_is_named_with_its_path(train):
    bad = {**CFG, "distill": {**CFG["distill"], "mdadd": {**CFG["distill"]["mdadd"], "iteratons": 5}}}
    with pytest.raises(ValueError, match=r"distill\.mdadd\.iteratons \(did you mean 'iterations'\?\)"):
        distill("mdadd", train, 5, bad, seed=0)
    with pytest.raises(ValueError, match=r"distill\.lors\.rnk\b"):
        distill("lors", train, 5, {**CFG, "distill": {"lors": {"rnk": 2}}}, seed=0)
    with pytest.raises(ValueError, match=r"student\.embed\b"):
        distill("covmatch", train, 5, {**CFG, "student": {**STUDENT, "embed": 8}}, seed=0)


def test_the_rule_grid_knows_every_registered_method():
    assert sorted(DISTILL_BLOCKS) == DISTILLERS.names()


@pytest.mark.parametrize("method", sorted(DISTILL_BLOCKS))
def test_a_job_gets_every_block_its_method_reads(train, method):
    """The distill rule passes each job only its method's blocks (``distill_params``): same numbers as the whole preset.

    The student and the covmatch override differ from their defaults, so a block left out would
    change the result rather than go unnoticed.
    """
    cfg = {**CFG, "distill": {**CFG["distill"], "covmatch": {"lr": 0.03}}}
    n = 0 if method == "full" else 6
    whole = distill(method, train, n, cfg, seed=7)
    part = distill(method, train, n, distill_params(method, cfg["student"], cfg["distill"]), seed=7)
    np.testing.assert_array_equal(part.image, whole.image)
    np.testing.assert_array_equal(part.text, whole.text)
    assert part.seen_seeds == whole.seen_seeds and part.trace == whole.trace


def test_loop_reduces_objective_against_fixed_students(train):
    cfg = MDADDConfig(iterations=60, lr=0.02, real_batch=300, queue_size=2, stagger=3, dynamic=False, model_lr=0.0)
    dset = distill_mdadd(train, 10, cfg, StudentConfig(**STUDENT), seed=2)
    # fixed students and the full real set each step: the objective is deterministic, so it must fall
    assert dset.trace[-1] < 0.5 * dset.trace[0]


def test_queue_distillation_lowers_socm_under_unseen_students(train):
    """The queue's point: the synthetic set matches the real moments in students it never saw."""
    n, seed = 10, 3
    cfg = from_dict(MDADDConfig, CFG["distill"]["mdadd"], iterations=60, real_batch=300)
    dset = distill_mdadd(train, n, cfg, StudentConfig(**STUDENT), seed=seed)
    assert len(dset.seen_seeds) > cfg.queue_size  # students left and fresh ones entered
    x0, t0 = sample_real_pairs(train, n, np.random.default_rng(job_seed(seed, "init")))  # the loop's start
    xr, tr = (torch.from_numpy(a) for a in train.pairs())

    def socm_under(student_seed, x, t):
        model = make_student(DX, DT, StudentConfig(**STUDENT), student_seed)
        with torch.no_grad():
            return float(socm_loss(*model(xr, tr), *model(torch.from_numpy(x), torch.from_numpy(t))))

    before = [socm_under(10_000 + i, x0, t0) for i in range(8)]
    after = [socm_under(10_000 + i, dset.image, dset.text) for i in range(8)]
    # paired over the same 8 unseen students; distillation should lower it for most of them
    assert np.mean(after) < 0.8 * np.mean(before)
    assert sum(a < b for a, b in zip(after, before)) >= 6


def test_queue_is_staggered_and_turns_over(train):
    q = ModelQueue(train, StudentConfig(**STUDENT), size=3, stagger=2, dynamic=True, lr=1e-3, batch_size=32, seed=0)
    assert [m["age"] for m in q.members] == [0, 2, 4]
    q.advance()
    q.advance()  # the oldest reaches the max age 6 and is replaced by a fresh student
    assert [m["age"] for m in q.members] == [2, 4, 0]
    assert q.entered == 4 and len(set(q.seen_seeds)) == 4
    fixed = ModelQueue(train, StudentConfig(**STUDENT), size=1, stagger=2, dynamic=False, lr=1e-3, batch_size=32, seed=0)
    for _ in range(5):
        fixed.advance()
    assert fixed.entered == 1 and fixed.members[0]["age"] == 5


def test_student_initialisation_depends_only_on_seed():
    a, b, c = (make_student(DX, DT, StudentConfig(**STUDENT), s) for s in (7, 7, 8))
    for (pa, pb, pc) in zip(a.parameters(), b.parameters(), c.parameters()):
        assert torch.equal(pa, pb)
        assert not torch.equal(pa, pc)


def test_herding_tracks_the_mean_better_than_random_subsets():
    rng = np.random.default_rng(4)
    f = rng.exponential(size=(400, 6))  # skewed, so a random subset's mean is noisy
    idx = herding_select(f, 20)
    assert len(set(idx)) == 20
    err_herd = np.linalg.norm(f[idx].mean(0) - f.mean(0))
    err_rand = [np.linalg.norm(f[rng.choice(400, 20, replace=False)].mean(0) - f.mean(0)) for _ in range(200)]
    assert err_herd < np.quantile(err_rand, 0.05)
    with pytest.raises(ValueError, match="cannot pick"):
        herding_select(f, 401)


def test_lors_similarity_label_is_identity_plus_low_rank(train):
    dset = distill("lors", train, 9, CFG, seed=5)
    rank = np.linalg.matrix_rank(dset.targets - np.eye(9, dtype=np.float32), tol=1e-5)
    assert rank <= CFG["distill"]["lors"]["rank"]
    assert len(dset.seen_seeds) == CFG["distill"]["lors"]["experts"]


def test_distilled_set_round_trip(tmp_path, train):
    dset = distill("lors", train, 4, CFG, seed=6)
    dset.save(tmp_path / "d.npz")
    back = DistilledSet.load(tmp_path / "d.npz")
    np.testing.assert_array_equal(back.image, dset.image)
    np.testing.assert_array_equal(back.targets, dset.targets)
    assert back.seen_seeds == dset.seen_seeds
    with pytest.raises(ValueError, match="targets"):
        DistilledSet(image=dset.image, text=dset.text, targets=np.eye(3, dtype=np.float32))
