"""The claims' evidence: per-replicate FDP and power samples, paired by replicate across methods."""

import numpy as np
import pytest

from repro.claims import FAIL, PASS, _check, load_claims
from repro.papers.groupfdr.experiment import aggregate, run_chunk
from repro.papers.groupfdr.grid import run_config
from tests.conftest import REPO
from repro.config import workflow_config

CONFIG = workflow_config(REPO)["groupfdr"]
CLAIMS = load_claims(REPO / "workflow/claims/groupfdr.yaml", REPO / "workflow/schemas/claims.schema.yaml")


def _chunk(setting, method, fdps, powers, qs=(0.1, 0.2)):
    records = [{"replicate": r, "q": q, "fdp": f, "power": p, "n_selected": 3, "runtime_s": 0.1}
               for r, (f, p) in enumerate(zip(fdps, powers)) for q in qs]
    return {"setting": setting, "method": method, "chunk": 0, "records": records, "example": None}


CFG = {"settings": {"a": {"family": "linear", "correlated": True}, "b": {"family": "linear"}}}


def test_aggregate_writes_one_sample_per_cell_and_setting():
    rng = np.random.default_rng(0)
    chunks = [_chunk("a", "group_gm", rng.uniform(0, 0.1, 40), rng.uniform(0.8, 1, 40)),
              _chunk("b", "group_gm", rng.uniform(0, 0.1, 40), rng.uniform(0.8, 1, 40)),
              _chunk("a", "gm", rng.uniform(0, 0.1, 40), rng.uniform(0.2, 0.4, 40))]
    metrics, _ = aggregate(chunks, CFG)
    fdp = metrics["fdr_control"]["group_gm"]["linear"]["fdp"]
    assert sorted(fdp) == ["a_q10", "a_q20", "b_q10", "b_q20"]
    assert fdp["a_q10"]["unit"] == "replicate" and fdp["a_q10"]["ids"] == [str(r) for r in range(40)]
    assert metrics["fdr_control"]["group_gm"]["linear"]["q"] == {"a_q10": 0.1, "a_q20": 0.2, "b_q10": 0.1,
                                                                 "b_q20": 0.2}
    # power: only the settings flagged correlated, at q = 0.1, the same replicate ids for every method
    assert list(metrics["power"]["group_gm"]) == ["a"] and metrics["power"]["gm"]["a"]["ids"] == fdp["a_q10"]["ids"]
    claims = {c.id: c for c in CLAIMS}
    assert _check(claims["group_gm_fdr_control_linear"], metrics)[0] == PASS  # FDPs well under q
    assert _check(claims["group_gm_power_vs_gm"], metrics)[0] == PASS  # paired power gap ~0.6


def test_an_fdr_far_above_q_fails_the_claim():
    rng = np.random.default_rng(1)
    chunks = [_chunk("a", "group_gm", rng.uniform(0.3, 0.5, 40), rng.uniform(0, 1, 40))]
    metrics, _ = aggregate(chunks, {"settings": {"a": {"family": "linear"}}})
    claim = next(c for c in CLAIMS if c.id == "group_gm_fdr_control_linear")
    assert _check(claim, metrics)[0] == FAIL


def test_a_replicate_in_two_chunks_is_an_error():
    chunks = [_chunk("a", "group_gm", [0.0, 0.1], [1, 1]), _chunk("a", "group_gm", [0.0], [1])]
    with pytest.raises(ValueError, match="appear in two chunk files"):
        aggregate(chunks, CFG)


def test_mirror_variants_share_the_perturbations_of_a_replicate():
    """The method seed comes from (setting, replicate), not the method: group_gm and group_gm_plus
    compute the same statistics and differ only in the threshold."""
    seeds = dict(data_seeds=[5], method_seeds=[7])
    cfg = {**run_config(CONFIG["smoke"], "rho05", "group_gm"), "replicates": 1}
    a = run_chunk(cfg, "rho05", "group_gm", 0, **seeds)
    b = run_chunk(cfg, "rho05", "group_gm_plus", 0, **seeds)
    np.testing.assert_array_equal(a["example"]["stats"], b["example"]["stats"])
    assert all(ra["n_selected"] >= rb["n_selected"] for ra, rb in zip(a["records"], b["records"]))
