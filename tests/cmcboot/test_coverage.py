"""Coverage is computed from Monte Carlo replicates, and a planted miscalibrated interval is caught."""

import numpy as np
import pytest

from repro.papers.cmcboot.experiment import INTERVAL_METHODS, make_context, run_chunk, simulate_data
from repro.metrics.coverage import coverage, coverage_se, covers, shrink_interval
from repro.seeding import job_seed

CFG = {"policies": ["sticky"], "sample_sizes": [1000], "episode_length": 50, "fig2_sample_size": 1000,
       "episode_lengths": [50], "moderate_sample_size": 1000, "levels": [0.5, 0.9, 0.95],
       "n_replicates": 300, "n_chunks": 1, "n_boot": 50, "target_right_prob": 0.8,
       "behaviour": {"sticky": {"stick": 0.5, "p_start": 0.2, "p_end": 0.8}}}


def test_covers_counts_closed_intervals():
    assert covers(np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]), 1.0).tolist() == [True, True, False]
    cov, width = coverage(np.array([[0.0], [2.0]]), np.array([[1.0], [4.0]]), 0.5)
    assert cov.tolist() == [0.5] and width.tolist() == [1.5]
    with pytest.raises(ValueError):
        covers(np.array([1.0]), np.array([0.0]), 0.5)


def test_chunk_coverage_is_the_fraction_of_replicates_and_shrinking_is_caught():
    """run_chunk's coverage counts equal a direct recount over the replicates' intervals, and the same
    CLT intervals with half-width halved under-cover: at 90% nominal a calibrated normal interval
    halved covers about P(|Z| < 0.82) = 0.59. With R = 300 replicates x 16 entries the standard
    error of a coverage is at most sqrt(0.25 / 300) = 0.029 per entry; the test asks the shrunk
    coverage to sit more than 3 SE below nominal and below the unshrunk one."""
    setting, R = "n1000_h50_sticky", CFG["n_replicates"]
    ctx = make_context(CFG)
    data_seed = job_seed(7, "cmcboot_data", setting=setting, chunk=0)  # what the workflow's job.seed_for gives
    out = run_chunk(CFG, setting, "clt", 0, data_seed=data_seed, seed=8)
    data = simulate_data(ctx, setting, R, np.random.default_rng(data_seed))
    lo, hi = INTERVAL_METHODS.create("clt", ctx=ctx, data=data, rng=np.random.default_rng(8))["clt"]["P"]
    truth = ctx.truth()["P"][None, :]
    i90 = CFG["levels"].index(0.9)
    # entries of P in rows a replicate never visited get the uninformative [0, 1] (s5 under this policy)
    entries = np.argwhere(ctx.support)  # (K, 3): s, a, t
    unvisited = data.counts.sum(-1)[:, entries[:, 0], entries[:, 1]] == 0  # (R, K)
    assert unvisited.any() and not unvisited.all()
    lo, hi = np.where(unvisited[..., None], 0.0, lo), np.where(unvisited[..., None], 1.0, hi)
    cov, width = coverage(lo[..., i90], hi[..., i90], truth)
    np.testing.assert_array_equal(out["results"]["clt"]["P"]["l90"]["covered"], np.round(cov * R).astype(int))
    np.testing.assert_allclose(np.asarray(out["results"]["clt"]["P"]["l90"]["width_sum"]) / R, width)
    slo, shi = shrink_interval(lo[..., i90], hi[..., i90], 0.5)
    cov_shrunk, width_shrunk = coverage(slo, shi, truth)
    se = coverage_se(0.5, R)
    np.testing.assert_allclose(width_shrunk, width / 2)
    assert cov_shrunk[~unvisited.any(0)].mean() < 0.9 - 3 * se
    assert cov_shrunk.mean() < cov.mean() - 3 * se
    # and the calibrated interval itself is not flagged: within 3 SE (+ 0.05 finite-n slack) of 90%
    assert abs(cov[~unvisited.any(0)].mean() - 0.9) < 3 * se + 0.05


def test_bad_setting_and_chunking_raise():
    with pytest.raises(ValueError, match="divide"):
        run_chunk(CFG, "n1000_h30_sticky", "clt", 0, data_seed=1, seed=1)
    with pytest.raises(ValueError, match="n_chunks"):
        run_chunk({**CFG, "n_chunks": 7}, "n1000_h50_sticky", "clt", 0, data_seed=1, seed=1)
    with pytest.raises(ValueError, match="unknown"):
        run_chunk(CFG, "n1000_h50_sticky", "jackknife", 0, data_seed=1, seed=1)
