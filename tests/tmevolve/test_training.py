"""The shared training loop on planted synthetic bags: contract files, folds, planted signal recovered."""

import numpy as np
import pandas as pd
import pytest
import torch

from repro.methods.mil_train import load_prepared, make_folds, prepare_cohort
from repro.papers.tmevolve.experiment import train_fold
from repro.papers.tmevolve.synth import generate_bags, write_contract_files

CFG = {"epochs": 4, "lr": 2e-3, "weight_decay": 0.0, "model": {"dim": 16, "dropout": 0.0, "attn_hidden": 8},
       "qk": {"survival": {"Q": 1, "K": 4}, "subtype": {"Q": 1, "K": 4}, "gene": {"Q": 1, "K": 4}}}


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    d = tmp_path_factory.mktemp("bags")
    bags, man = generate_bags(40, side=(7, 9), feat_dim=16, seed=11)
    write_contract_files(bags, man, d / "manifest.csv", d / "bags.h5")
    torch.save(prepare_cohort(str(d / "bags.h5"), str(d / "manifest.csv"), pca_dim=None), d / "ds.pt")
    return load_prepared(str(d / "ds.pt")), man, bags


def test_contract_roundtrip_keeps_slides_grid_and_truth(cohort):
    data, man, bags = cohort
    assert list(data.table.slide_id) == list(man.slide_id)
    b = data.bags[0]
    raw = bags[b.slide_id]
    assert b.n == len(raw.features)
    np.testing.assert_array_equal(b.patch_types, raw.patch_types)
    np.testing.assert_array_equal(b.grid.numpy().astype(int), raw.coords // 224 - (raw.coords // 224).min(0))


def test_folds_are_a_partition_fixed_by_the_seed(cohort):
    data, _, _ = cohort
    f1, f2, f3 = (make_folds(data.table, 5, s) for s in (1, 1, 2))
    pd.testing.assert_frame_equal(f1, f2)
    assert not f1.fold.equals(f3.fold)
    assert sorted(f1.fold.value_counts()) == [8] * 5


def test_planted_subtype_is_recovered_and_training_is_deterministic(cohort):
    data, _, _ = cohort
    folds = make_folds(data.table, 4, 0)
    r1 = train_fold("abmil", "subtype", data, folds, 0, CFG, seed=3)
    r2 = train_fold("abmil", "subtype", data, folds, 0, CFG, seed=3)
    # the subtype shifts every tumour patch by 2.4 noise sd: a linear read-out separates it almost
    # perfectly; with 10 test slides an AUC above 0.8 leaves a wide margin for sampling error
    assert r1.metric > 0.8
    assert r1.metric == r2.metric and r1.predictions.equals(r2.predictions)


def test_tmevolve_trains_on_every_task_and_reports_region_ari(cohort):
    data, _, _ = cohort
    folds = make_folds(data.table, 4, 0)
    emb = np.random.default_rng(0).normal(size=(6, 24))
    for task in ("survival", "subtype", "gene"):
        r = train_fold("tmevolve", task, data, folds, 1, {**CFG, "epochs": 1}, concept_emb=emb, seed=5)
        assert np.isfinite(r.metric)
        assert -1 <= r.diagnostics["ari_q0"] <= 1 and -1 <= r.diagnostics["ari_final"] <= 1


def test_every_method_of_a_unit_gets_the_same_seed_and_aggregation_refuses_unpaired_folds():
    from repro.claims import sample
    from repro.jobs import Job
    from repro.papers.tmevolve.experiment import aggregate_metrics, train_seed

    def job(method, fold):
        return Job(rule="tmevolve_train", seed=0, scale="smoke", global_seed=11,
                   wildcards={"cohort": "synthetic", "task": "survival", "method": method, "fold": str(fold)})

    unit = {"cohort": "synthetic", "task": "survival"}
    seeds = {m: [train_seed(job(m, f), fold=f, **unit) for f in range(3)] for m in ("tmevolve", "abmil", "mean")}
    assert seeds["tmevolve"] == seeds["abmil"] == seeds["mean"] and len(set(seeds["abmil"])) == 3

    def summary(values, fold_seeds):
        return {"mean": float(np.mean(values)), "sd": 0.1, "per_unit": sample(values, ["fold0", "fold1"], "fold"),
                "seeds": fold_seeds}

    paired = {"survival": {"tmevolve": summary([0.6, 0.7], [1, 2]), "abmil": summary([0.5, 0.6], [1, 2])}}
    assert aggregate_metrics(paired, {})["best_baseline"]["survival"]["method"] == "abmil"
    unpaired = {"survival": {"tmevolve": summary([0.6, 0.7], [1, 2]), "abmil": summary([0.5, 0.6], [1, 3])}}
    with pytest.raises(ValueError, match=r"survival: '(abmil|tmevolve)' is not paired .*other seeds on units \['fold1'\]"):
        aggregate_metrics(unpaired, {})


@pytest.fixture(scope="module")
def spatial(tmp_path_factory):
    from repro.papers.tmevolve.synth import generate_spatial_cohort

    d = tmp_path_factory.mktemp("spatial")
    bags, man = generate_spatial_cohort({"n_slides": 150, "blocks": 5, "feat_dim": 8}, seed=4)
    write_contract_files(bags, man, d / "manifest.csv", d / "bags.h5")
    torch.save(prepare_cohort(str(d / "bags.h5"), str(d / "manifest.csv"), pca_dim=None), d / "ds.pt")
    return load_prepared(str(d / "ds.pt"))


def test_repeated_folds_give_every_method_the_same_unit_ids(spatial):
    from repro.papers.tmevolve.experiment import make_repeated_folds, unit_id

    folds = make_repeated_folds(spatial.table, 5, 3, seed=1)
    assert sorted(folds.repeat.unique()) == [0, 1, 2]
    for r in range(3):
        part = folds[folds.repeat == r]
        assert sorted(part.slide_id) == sorted(spatial.table.slide_id)       # each repeat is a partition
    assert not folds[folds.repeat == 0].fold.equals(folds[folds.repeat == 1].fold.reset_index(drop=True))
    assert unit_id(2, 4) == "r2_fold4_s2"


def test_shuffle_control_keeps_composition_and_destroys_adjacency(spatial):
    from repro.papers.tmevolve.experiment import shuffle_positions, slide_features

    shuf = shuffle_positions(spatial, seed=3)
    f0, f1 = slide_features(spatial), slide_features(shuf)
    comp = [c for c in f0 if c.startswith("frac_")]
    pd.testing.assert_frame_equal(f0[comp], f1[comp])
    assert f0.contact.std() > 0.2 and abs(np.corrcoef(f0.contact, f1.contact)[0, 1]) < 0.3
    b0, b1 = spatial.bags[0], shuf.bags[0]
    assert torch.equal(b0.x, b1.x) and not torch.equal(b0.grid, b1.grid)
    assert sorted(map(tuple, b0.grid.tolist())) == sorted(map(tuple, b1.grid.tolist()))


def test_oracles_on_the_spatial_cohort_composition_near_chance_arrangement_far_above(spatial):
    from repro.papers.tmevolve.experiment import make_repeated_folds, oracle_summaries

    folds = make_repeated_folds(spatial.table, 5, 1, seed=0)
    seeds = {(0, f): 100 + f for f in range(5)}
    out = oracle_summaries(spatial, folds, "survival", seeds)
    assert set(out) == {"oracle_true", "oracle_composition", "oracle_arrangement", "random"}
    assert out["oracle_composition"]["per_unit"]["ids"] == out["random"]["per_unit"]["ids"]
    # 5 folds: each tests a fifth and trains on four fifths, which the checker's CV correction needs
    assert out["random"]["per_unit"]["cv"]["test_over_train"] == pytest.approx(0.25, abs=0.02)
    # 150 slides, 5 folds of 30: per-fold sd ~0.06, the mean over 5 folds ~0.03
    assert out["oracle_composition"]["mean"] < 0.6
    assert out["oracle_arrangement"]["mean"] > out["oracle_composition"]["mean"] + 0.1
    assert out["oracle_true"]["mean"] > 0.65
    sub = oracle_summaries(spatial, folds, "subtype", seeds)
    assert "oracle_true" not in sub and sub["oracle_arrangement"]["mean"] > sub["oracle_composition"]["mean"] + 0.15


def test_shuffled_control_trains_through_the_registry(spatial):
    folds = make_folds(spatial.table, 3, 0)
    r = train_fold("shuffled_graphmil", "gene", spatial, folds, 0, {**CFG, "epochs": 1}, seed=2)
    assert np.isfinite(r.metric)


def test_ridge_cox_matches_lifelines():
    from lifelines import CoxPHFitter

    from repro.papers.tmevolve.experiment import ridge_cox

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    t = rng.exponential(np.exp(-X @ np.array([0.8, -0.5, 0.0])))
    e = (rng.random(200) < 0.7).astype(int)
    ours = ridge_cox(X, t, e, penalty=0.0)
    ref = CoxPHFitter().fit(pd.DataFrame(X, columns=list("abc")).assign(T=t, E=e), "T", "E").params_.to_numpy()
    np.testing.assert_allclose(ours, ref, atol=2e-3)   # same likelihood (Breslow ties, none here), same optimum
    # a tiny fold with a separating feature: the penalty keeps the fit finite
    assert np.all(np.isfinite(ridge_cox(np.array([[0.0], [1.0], [2.0]]), np.array([3.0, 2.0, 1.0]), np.ones(3))))


def test_loss_floors_are_nested_and_the_planted_hazard_lowers_the_training_loss(spatial):
    from repro.papers.tmevolve.experiment import loss_floors

    folds = make_folds(spatial.table, 5, 0)
    floors = loss_floors(spatial, folds, 0, seed=3)
    assert set(floors) == {"marginal", "composition", "arrangement", "true_log_hazard"}
    train = {k: v["train"] for k, v in floors.items()}
    # nested linear models of one convex loss: more features never raise the training optimum
    assert train["arrangement"] <= train["composition"] + 1e-4 <= train["marginal"] + 2e-4
    # the planted arrangement carries the hazard, on the training part and on the held-out part
    assert train["arrangement"] < train["marginal"] - 0.05 and train["true_log_hazard"] < train["marginal"] - 0.05
    assert floors["true_log_hazard"]["heldout"] < floors["marginal"]["heldout"]


def test_learning_curve_holds_the_outer_fold_out_and_does_not_change_training(spatial):
    from repro.methods.mil_train import fit_fold, summarize_folds
    from repro.papers.tmevolve.experiment import TASKS, learning_curve, model_config

    folds = make_folds(spatial.table, 3, 0)
    curves = learning_curve("mean", spatial, folds, 0, {**CFG, "epochs": 3}, seed=2)
    assert len(curves["train"]) == len(curves["heldout"]) == 3
    assert np.all(np.isfinite(curves["train"] + curves["heldout"]))
    # the outer test fold is never read: changing its labels changes nothing
    test = folds.set_index("slide_id").fold.reindex(spatial.table.slide_id.astype(str)).to_numpy() == 0
    table = spatial.table.copy()
    table.loc[test, "survival_months"] = table.loc[test, "survival_months"][::-1].to_numpy()
    other = type(spatial)(spatial.bags, table, spatial.tissue_types)
    assert learning_curve("mean", other, folds, 0, {**CFG, "epochs": 3}, seed=2) == curves
    # recording the held-out loss leaves the training trajectory as it was
    a = train_fold("mean", "survival", spatial, folds, 0, {**CFG, "epochs": 3}, seed=2)
    b = fit_fold("mean", TASKS.create("survival"), spatial, folds, 0, epochs=3, lr=CFG["lr"],
                 model_cfg=model_config("survival", CFG), seed=2, heldout_curve=True)
    assert a.diagnostics["train_loss_curve"] == b.diagnostics["train_loss_curve"]
    recs = [{"metric": a.metric, "metric_name": "c_index", "fold": 0, "diagnostics": a.diagnostics}] * 2
    assert summarize_folds(recs)["train_loss_curve"] == pytest.approx(a.diagnostics["train_loss_curve"])
