"""The claims' evidence is per replicate and paired: every interval method sees the same replicate data
sets (seeds from the unit, not the method), and the metrics carry per-replicate samples and
intervals bootstrapped over the same replicates for every method."""

import json

import numpy as np
import pytest

from repro.claims import as_evidence, evaluate, load_claims
from repro.jobs import Job
from repro.papers.cmcboot.experiment import _replicate_bootstrap, aggregate, chunk_seeds, run_chunk
from repro.papers.cmcboot.grid import settings
from repro.seeding import job_seed

from .test_workflow import REPO

CFG = {"policies": ["uniform", "sticky"], "sample_sizes": [200, 1000], "episode_length": 50,
       "fig2_sample_size": 1000, "episode_lengths": [10, 50], "moderate_sample_size": 1000,
       "levels": [0.5, 0.9, 0.95], "methods": ["model", "episodic", "clt"], "n_replicates": 24, "n_chunks": 2,
       "n_boot": 30, "target_right_prob": 0.8, "behaviour": {"sticky": {"stick": 0.5, "p_start": 0.2, "p_end": 0.8}}}
VARIANTS = ("model_percentile", "model_basic", "episodic", "clt")
#: the settings (both policies) of each regime under CFG
REGIMES = {"small_n": "n200_h50_", "moderate_n": "n1000_h50_", "short_episodes": "n1000_h10_"}


def _job(method: str, setting: str, chunk: int) -> Job:
    """The job the workflow runs for one chunk (its own seed hashes every wildcard, the method included)."""
    wildcards = {"setting": setting, "method": method, "chunk": str(chunk)}
    return Job(rule="cmcboot_intervals", seed=job_seed(7, "cmcboot_intervals", **wildcards), scale="smoke",
               global_seed=7, cfg=CFG, wildcards=wildcards)


def _json(obj):
    return json.loads(json.dumps(obj, default=lambda a: a.tolist()))


@pytest.fixture(scope="module")
def chunks() -> list[dict]:
    out = []
    for setting in settings(CFG):
        for method in CFG["methods"]:
            for chunk in range(CFG["n_chunks"]):
                job = _job(method, setting, chunk)
                out.append(_json(run_chunk(CFG, setting, method, chunk, **chunk_seeds(job.seed_for, setting, chunk))))
    return out


def test_seeds_of_a_unit_are_the_same_for_every_method(chunks):
    setting = "n1000_h50_sticky"
    seeds = {m: chunk_seeds(_job(m, setting, 1).seed_for, setting, 1) for m in CFG["methods"]}
    assert len({_job(m, setting, 1).seed for m in CFG["methods"]}) == 3  # the job seed would not pair them
    assert len({tuple(s.values()) for s in seeds.values()}) == 1
    assert seeds["clt"] != chunk_seeds(_job("clt", setting, 0).seed_for, setting, 0)  # chunks differ
    assert seeds["clt"] != chunk_seeds(_job("clt", "n1000_h10_sticky", 1).seed_for, "n1000_h10_sticky", 1)
    # the replicate data are the same for every method: a fingerprint of the data (unvisited (s, a)
    # pairs, which no method changes) and the replicate ids agree across methods
    for s in settings(CFG):
        for c in range(CFG["n_chunks"]):
            same = [x for x in chunks if x["setting"] == s and x["chunk"] == c]
            assert len(same) == 3
            assert len({x["unvisited_pairs_mean"] for x in same}) == 1
            assert len({tuple(x["replicate_ids"]) for x in same}) == 1


def test_metrics_carry_paired_per_replicate_evidence(chunks, tmp_path):
    table, metrics = aggregate(chunks, CFG, seed=5)
    n = CFG["n_replicates"]
    for regime in ("small_n", "moderate_n", "short_episodes"):
        ids = None
        for variant in VARIANTS:
            node = metrics["summary"][variant][regime]
            shortfall = as_evidence(node["shortfall"], "shortfall")
            assert shortfall.unit == "replicate" and len(shortfall.ids) == n
            ids = ids or shortfall.ids
            assert shortfall.ids == ids  # paired: the same replicates on every side
            assert shortfall.values.mean() == pytest.approx(node["shortfall"]["mean"])
            # the interval's estimate is the summary number: mean over cells of |coverage - nominal|
            rows = table[(table["method"] == variant) & table["setting"].str.startswith(REGIMES[regime])]
            assert node["abs_gap"]["estimate"] == pytest.approx((rows["coverage"] - rows["level"]).abs().mean())
            assert node["abs_gap"]["low"] <= node["abs_gap"]["estimate"] <= node["abs_gap"]["high"]
            assert node["abs_gap"]["n"] == n and node["abs_gap"]["unit"] == "replicate"
        adv = metrics["advantage"][regime]
        gaps = {v: metrics["summary"][v][regime]["abs_gap"]["estimate"] for v in ("model_percentile", "episodic", "clt")}
        assert adv["estimate"] == pytest.approx(min(gaps["episodic"], gaps["clt"]) - gaps["model_percentile"])
    # every claim is decided from this evidence (none is left "summary only")
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(metrics))
    claims = load_claims(REPO / "workflow/claims/cmcboot.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    for r in evaluate(claims, path):
        assert r.interval is not None and r.interval.n == n, (r.claim.id, r.status, r.reason)


def test_bootstrap_resamples_the_same_replicates_for_every_method():
    """Two methods with identical per-replicate coverage get identical resampled gaps (so their
    difference is exactly 0 in every resample), which an unpaired resampling would not give."""
    rng = np.random.default_rng(0)
    m = rng.integers(0, 5, size=(30, 6)) / 4
    other = rng.integers(0, 5, size=(30, 6)) / 4
    levels = np.array([0.5, 0.9, 0.95] * 2)
    boot = _replicate_bootstrap({"a": m, "b": m.copy(), "c": other}, levels, 30, seed=1)
    np.testing.assert_array_equal(boot[0], boot[1])
    assert boot[0].std() > 0 and not np.array_equal(boot[0], boot[2])
