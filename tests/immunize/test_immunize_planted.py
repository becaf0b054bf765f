"""The digits tasks, the experiment's curvature records against closed forms, aggregation's pairing check."""

import numpy as np
import pytest
import torch

from repro.papers.immunize.experiment import _probe_eigs, aggregate, rate_key, run_scaling, setting_key
from repro.papers.immunize.synth import make_tasks


def test_tasks_split_by_digit_and_extractor_is_orthonormal():
    t = make_tasks(0, k=8)
    xh, yh = t.split("train", "harmful")
    xb, yb = t.split("test", "benign")
    assert set(yh.tolist()) == {5, 6, 7, 8, 9} and set(yb.tolist()) == {0, 1, 2, 3, 4}
    assert torch.allclose(t.theta0.T @ t.theta0, torch.eye(8, dtype=t.theta0.dtype), atol=1e-10)
    assert torch.equal(make_tasks(0, k=8).x_train, t.x_train)  # same seed, same split
    with pytest.raises(ValueError, match="k=0"):
        make_tasks(0, k=0)


def test_probe_eigs_lanczos_equals_closed_form():
    t = make_tasks(1, k=6)
    z = t.split("train", "harmful")[0] @ t.theta0
    e = _probe_eigs(z, seed=3)
    assert e["lanczos_max"] == pytest.approx(e["exact_max"], rel=1e-8)
    assert e["lanczos_min"] == pytest.approx(e["exact_min"], rel=1e-6)


def test_scaling_estimator_matches_exact_on_small_mlps():
    rows = run_scaling({"scaling": {"hidden": [2, 3], "n": 60, "lanczos_iter": 200}}, make_tasks(0, k=4), 0)
    for r in rows:  # Lanczos run to the full dimension is exact
        assert r["rel_err_max"] < 1e-6 and r["rel_err_min"] < 1e-6
        assert r["n_params"] == 64 * r["hidden"] + r["hidden"] * 10


def test_keys_have_no_dots():
    assert setting_key("probe", "sgd", 0.1) == "probe_sgd_lr0p1" and rate_key(0.05) == "rate0p05"


def test_aggregate_refuses_unpaired_units():
    record = {"checkpoints": [1], "models": {"mlp": {"release": {}, "methods": {"none": {}}}}}
    with pytest.raises(ValueError, match=r"missing \[\('mlp', 'ours', 0\)\]"):
        aggregate({0: record}, ["none", "ours"], ["mlp"])


def _tiny_cfg(**adversary):
    return {"models": ["linear", "mlp"], "methods": ["none", "condnum", "ours"], "data": {"k": 4},
            "release": {"mlp": {"hidden": 4, "steps": 5, "lr": 0.01}},
            "immunize": {"steps": 2, "lr": 0.01, "radius": 0.1, "n_samples": 1, "head_steps": 5},
            "adversary": {"modes": ["probe", "full"], "grid": {"sgd": [0.1, 1.0]}, "checkpoints": [1, 2]} | adversary,
            "utility": {"steps": 3, "lr": 0.05}, "service": {"rates": [0.0], "n_user": 20}, "relearn": {"n": 5, "lr": 0.05},
            "scaling": {"hidden": [2, 3], "n": 20, "lanczos_iter": 5}}


def test_full_grid_trims_one_models_full_adversary_and_aggregate_keeps_its_settings():
    from repro.papers.immunize.experiment import run_unit

    cfg = _tiny_cfg(full_grid={"mlp": {"sgd": [0.1]}})
    records = {s: run_unit(cfg, s, s, s)[0] for s in (0, 1)}
    assert set(records[0]["models"]["mlp"]["methods"]["ours"]["attack"]["open_weights"]) == {
        "probe_sgd_lr0p1", "probe_sgd_lr1", "full_sgd_lr0p1"}
    assert len(records[0]["models"]["linear"]["methods"]["ours"]["attack"]["open_weights"]) == 4
    metrics = aggregate(records, cfg["methods"], cfg["models"])[0]
    assert set(metrics["mlp"]["slowdown_vs_condnum"]) == {"probe_sgd_lr0p1", "probe_sgd_lr1", "full_sgd_lr0p1"}
    assert set(metrics["linear"]["slowdown_vs_condnum"]) == {"probe_sgd_lr0p1", "probe_sgd_lr1", "full_sgd_lr0p1",
                                                             "full_sgd_lr1"}
    assert all(np.isfinite(metrics["mlp"]["slowdown_vs_none"]["ours"][k]["values"]).all()
               for k in metrics["mlp"]["slowdown_vs_condnum"])
    # a setting one seed has and another lacks is refused, not aggregated as a gap
    del records[1]["models"]["mlp"]["methods"]["ours"]["attack"]["open_weights"]["full_sgd_lr0p1"]
    with pytest.raises(ValueError, match=r"mlp lacks settings \['full_sgd_lr0p1'\]"):
        aggregate(records, cfg["methods"], cfg["models"])
