"""The cmcboot smoke DAG builds from an empty folder, and its outputs say what they should."""

import json
from pathlib import Path

import pandas as pd
import pytest

from repro.claims import evaluate, load_claims
from repro.config import workflow_config
from repro.papers.cmcboot.grid import settings

REPO = Path(__file__).resolve().parents[2]

TARGETS = ["reports/cmcboot_fig1.pdf", "reports/cmcboot_fig2.pdf", "reports/cmcboot_table1.md",
           "results/cmcboot/metrics.json"]


def smoke_preset() -> dict:
    return workflow_config(REPO)["cmcboot"]["smoke"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_run):
    tmp_path = smoke_dir  # shared with the reproducibility tests and the whole-workflow tests
    workflow_run(tmp_path, *TARGETS)
    cfg = smoke_preset()
    for target in TARGETS + ["reports/cmcboot_table1.csv", "reports/cmcboot_fig1.csv", "reports/cmcboot_fig2.csv"]:
        assert (tmp_path / target).stat().st_size > 0, target
    assert (tmp_path / "reports/cmcboot_fig1.pdf").read_bytes()[:5] == b"%PDF-"
    long = pd.read_csv(tmp_path / "results/cmcboot/coverage_long.csv")
    variants = {"model_percentile", "model_basic", "episodic", "clt"}
    # one row per setting x interval variant x target family x level, each from every replicate
    assert len(long) == len(settings(cfg)) * len(variants) * 4 * len(cfg["levels"])
    assert set(long["method"]) == variants
    assert (long["n_replicates"] == cfg["n_replicates"]).all()
    assert long["coverage"].between(0, 1).all() and (long["width"] >= 0).all()
    # wider nominal level -> interval at least as wide (bootstrap quantiles and z are monotone)
    wide = long.pivot_table(index=["setting", "method", "target"], columns="level", values="width")
    assert (wide[0.95] >= wide[0.9] - 1e-12).all() and (wide[0.9] >= wide[0.5] - 1e-12).all()
    metrics = json.loads((tmp_path / "results/cmcboot/metrics.json").read_text())
    claims = load_claims(REPO / "workflow/claims/cmcboot.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    results = evaluate(claims, tmp_path / "results/cmcboot/metrics.json")
    assert all(r.status in ("PASS", "FAIL", "INCONCLUSIVE") for r in results), [r.reason for r in results]  # every claim is checked
    assert all(r.interval is not None and r.interval.n == cfg["n_replicates"] for r in results), \
        [r.reason for r in results]  # from per-replicate evidence, not a bare summary
    assert metrics["provenance"]["scale"] == "smoke"
    table1 = pd.read_csv(tmp_path / "reports/cmcboot_table1.csv")
    assert len(table1) == len(settings(cfg)) * 4 * len(cfg["levels"])
