"""Selectors that differ only in their selection rule share one set of mirror statistics per replicate,
and the cheaper residualisation of the lasso path equals the SVD one it replaced."""

import json

import numpy as np
import pytest

import repro.papers.groupfdr.experiment as experiment
from repro.methods.fdr_selectors import MIRRORS, same_statistics
from repro.methods.mirror import SELECTION_RULES, _residual_on
from repro.papers.groupfdr.grid import STATISTICS_SOURCE, chunk_targets, run_config, statistics_input

SETTING = {"n": 120, "p": 12, "d": 3, "rho_within": 0.5, "rho_between": 0.25, "n_true": 3, "amplitude": 5.0,
           "methods": ["group_gm", "group_gm_plus", "group_gm_stepdown", "gm", "gm_stepdown"]}
CFG = {"replicates": 3, "chunks": 1, "qs": [0.05, 0.1, 0.2], "settings": {"s": SETTING}}
DATA_SEEDS, METHOD_SEEDS = [11, 12, 13], [21, 22, 23]


def _residual_on_svd(A, V):
    """The SVD implementation the Gram-matrix one replaced (the GM package's truncation)."""
    U, sv, _ = np.linalg.svd(A, full_matrices=False)
    U = U[:, sv > sv[0] * 1e-10]
    keep = min(int(0.95 * A.shape[1]), U.shape[1])
    R = V - U[:, :keep] @ (U[:, :keep].T @ V)
    if np.any((R**2).sum(0) < 0.05 * (V**2).sum(0)):
        keep = min(10, U.shape[1])
        R = V - U[:, :keep] @ (U[:, :keep].T @ V)
    return R


@pytest.mark.parametrize("in_span", [False, True])
def test_gram_residual_equals_the_svd_residual(in_span):
    rng = np.random.default_rng(3)
    n, k = 200, 40
    L = np.linalg.cholesky(0.5 * np.eye(k) + 0.5)  # equicorrelated columns
    A = rng.standard_normal((n, k)) @ L.T
    V = rng.standard_normal((n, 4))
    if in_span:  # V nearly in span(A): the package's fallback to 10 singular vectors
        V = A @ rng.standard_normal((k, 4)) + 0.01 * V
    R, R_svd = _residual_on(A, V), _residual_on_svd(A, V)
    assert np.allclose(R, R_svd, atol=1e-8 * np.abs(V).max())
    # the fallback branch really ran in the in-span case (and not otherwise)
    P95 = np.linalg.svd(A, full_matrices=False)[0][:, : int(0.95 * k)]
    fell_back = np.any(((V - P95 @ (P95.T @ V)) ** 2).sum(0) < 0.05 * (V**2).sum(0))
    assert fell_back == in_span


def test_statistics_sources_differ_from_their_method_only_in_the_rule():
    for method, source in STATISTICS_SOURCE.items():
        assert same_statistics(method, source)
        assert MIRRORS[method]["rule"] != MIRRORS[source]["rule"]


def _run(method, source=None):
    cfg = run_config(CFG, "s", method)
    out = experiment.run_chunk(cfg, "s", method, 0, data_seeds=DATA_SEEDS, method_seeds=METHOD_SEEDS, source=source)
    return json.loads(json.dumps(out, default=lambda a: np.asarray(a).tolist()))  # through a file's JSON


@pytest.mark.parametrize("method", sorted(STATISTICS_SOURCE))
def test_reused_statistics_give_the_separate_fit_and_are_computed_once(method, monkeypatch):
    source_method = STATISTICS_SOURCE[method]
    separate = _run(method)  # fits its own statistics
    calls = []
    real = experiment.mirror_statistics
    monkeypatch.setattr(experiment, "mirror_statistics", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    source = _run(source_method)
    shared = _run(method, source=source)
    assert calls == [source_method] * len(DATA_SEEDS)  # one fit per replicate, none for the rule variant
    assert shared["statistics_from"] == source_method
    for a, b in zip(separate["statistics"], shared["statistics"]):
        assert np.array_equal(a["M"], b["M"])
    key = lambda rec: (rec["replicate"], rec["q"])
    strip = lambda recs: {key(r): (r["fdp"], r["power"], r["n_selected"]) for r in recs}
    assert strip(shared["records"]) == strip(separate["records"])
    if MIRRORS[method]["grouped"]:  # each count is the method's own rule on the shared statistics
        rule = SELECTION_RULES.get(MIRRORS[method]["rule"])
        M = {s["replicate"]: np.asarray(s["M"]) for s in shared["statistics"]}
        assert all(r["n_selected"] == len(rule(M[r["replicate"]], r["q"])) for r in shared["records"])


def test_statistics_of_other_seeds_or_another_statistic_are_refused():
    source = _run("group_gm")
    cfg = run_config(CFG, "s", "group_gm_plus")
    with pytest.raises(ValueError, match="replicate 1 is missing or has other seeds"):
        experiment.run_chunk(cfg, "s", "group_gm_plus", 0, data_seeds=[11, 99, 13], method_seeds=METHOD_SEEDS,
                             source=source)
    with pytest.raises(ValueError, match="not this method's statistics"):
        experiment.run_chunk(run_config(CFG, "s", "gm_stepdown"), "s", "gm_stepdown", 0, data_seeds=DATA_SEEDS,
                             method_seeds=METHOD_SEEDS, source=source)


def test_the_dag_feeds_a_rule_variant_its_sources_chunk():
    assert statistics_input(CFG, "s", "group_gm_plus", 0) == ["results/groupfdr/runs/s/group_gm/chunk0.json"]
    assert statistics_input(CFG, "s", "group_gm", 0) == []
    alone = {**CFG, "settings": {"s": {**SETTING, "methods": ["group_gm_plus"]}}}
    assert statistics_input(alone, "s", "group_gm_plus", 0) == []  # no source run: it fits its own
    assert "results/groupfdr/runs/s/group_gm/chunk0.json" in chunk_targets(CFG)


def test_real_data_table_fits_the_shared_statistics_once_per_draw(monkeypatch):
    from repro.papers.groupfdr.synth import simulate_grouped

    data = simulate_grouped(150, 8, 3, rho_within=0.5, rho_between=0.2, n_true=2, amplitude=5.0,
                            rng=np.random.default_rng(4))
    methods = ["group_gm", "group_gm_plus", "group_gm_stepdown"]
    separate = [experiment.real_data_table(data, [m], [0.1, 0.2], n_draws=2, seed=5) for m in methods]
    calls = []
    real = experiment.mirror_statistics
    monkeypatch.setattr(experiment, "mirror_statistics", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    shared = experiment.real_data_table(data, methods, [0.1, 0.2], n_draws=2, seed=5)
    assert calls == ["group_gm", "group_gm"]  # one fit per draw for the three rules
    for m, alone in zip(methods, separate):
        got = shared[shared.method == m].reset_index(drop=True)
        assert got[["q", "group", "selection_frequency", "statistic"]].equals(
            alone[["q", "group", "selection_frequency", "statistic"]])
