"""The smoke DAG of TMEvolve (WSI stage included) builds Fig. 3, the tables and metrics.json from an empty folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from repro.claims import evaluate, interval_rows, load_claims
from tests.conftest import scheduled_rules

REPO = Path(__file__).resolve().parents[2]
TARGETS = ["reports/tmevolve_fig3.pdf", "results/tmevolve/metrics.json", "reports/tmevolve_table1.md",
           "reports/tmevolve_table3.md", "reports/tmevolve_table4.md"]


@pytest.mark.slow
def test_smoke_dag_builds_figure_tables_and_metrics(smoke_dir, workflow_run):
    tmp_path = smoke_dir  # shared with the whole-workflow tests (the AE report reuses these builds)
    workflow_run(tmp_path, *TARGETS)
    for target in TARGETS:
        assert (tmp_path / target).stat().st_size > 0, target
    metrics = json.loads((tmp_path / "results/tmevolve/metrics.json").read_text())
    assert metrics["provenance"]["scale"] == "smoke"
    methods = ["mean", "abmil", "transmil", "graphmil", "dsmil", "tmevolve"]
    oracles = ["oracle_true", "oracle_composition", "oracle_arrangement", "random"]
    for task in ("survival", "subtype", "gene"):
        assert set(methods) <= set(metrics[task]) and set(methods) <= set(metrics["control"][task])
        assert {"oracle_composition", "oracle_arrangement", "random"} <= set(metrics[task])
    # every summary of a task is paired over the same units
    ids = {m: tuple(s["per_unit"]["ids"]) for m, s in metrics["survival"].items() if isinstance(s, dict) and s.get("per_unit")}
    assert len(set(ids.values())) == 1 and next(iter(ids.values()))[0] == "r0_fold0_s0"
    # the mechanisms' diagnostics and the version-2 choices are recorded
    assert {"rho_rowsum_median", "dirichlet_ratio", "spread_feature", "spread_spatial"} <= set(metrics["fidelity"]["survival"])
    assert "conductivity" in metrics["design_choices"]
    # the ARI of the regions is a proper adjusted Rand index
    assert -1 <= metrics["ari"]["q0"] <= 1 and -1 <= metrics["ari"]["final"] <= 1
    # the figure's CSV holds one bar per method and one row per patch of the traced slide
    fig = pd.read_csv(tmp_path / "reports/tmevolve_fig3.csv")
    assert sorted(fig.loc[fig.panel == "c_index", "method"]) == sorted(
        methods + ["shuffled_tmevolve", "shuffled_graphmil"] + oracles)
    slide = fig[fig.panel == "slide"]
    assert slide.slide_id.nunique() == 1 and len(slide) > 4
    # every claim can be checked against this metrics file (none is NOT RUN for a missing metric)
    claims = load_claims(REPO / "workflow/claims/tmevolve.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    missing = [r.claim.id for r in evaluate(claims, tmp_path / "results/tmevolve/metrics.json")
               if r.status == "NOT RUN"]
    # at smoke the survival ablations are not run (ablation_tasks: [gene]); everything else is there
    assert set(missing) <= {"ablation_no_diffusion_hurts", "ablation_no_evolution_hurts", "ablation_no_balance_hurts",
                            "ablation_random_concepts_hurt"}
    # every other claim is judged from per-unit evidence (at smoke's 2 units: INCONCLUSIVE by the min-units
    # rule), never from a bare summary
    judged = [r for r in evaluate(claims, tmp_path / "results/tmevolve/metrics.json") if r.claim.id not in missing]
    assert judged and all(r.status in ("PASS", "FAIL", "INCONCLUSIVE") for r in judged)
    assert not [r.claim.id for r in judged if "summary only" in r.reason]
    # Fig. 3 draws the survival claim's own interval (the verdict's, on the metrics.json built from the same runs):
    # at smoke's 2 units none, TMEvolve's paired mean kept
    (verdict,) = [r for r in judged if r.claim.id == "survival_beats_best_baseline"]
    row = fig[(fig.panel == "c_index") & (fig.method == "tmevolve")].iloc[0]
    want = pd.DataFrame(interval_rows(claims, metrics, ["survival_beats_best_baseline"])).iloc[0]
    assert row["claim"] == "survival_beats_best_baseline" and row["status"] == verdict.status
    assert row["diff"] == pytest.approx(want["estimate"], rel=1e-5) and row["n"] == want["n"] == 2
    assert np.isnan(row["low"]) and np.isnan(want["low"]) and row["interval"].startswith("none")
    assert row["reference"] == metrics["best_baseline"]["survival"]["method"]
    # at smoke a task's methods and controls train in one job, its ablations and grid in another (train_bundle: task);
    # its repeat JSON carries the predictions of each test fold of each run
    rep = json.loads((tmp_path / "results/tmevolve/spatial/train/survival/methods/r0.json").read_text())
    assert {"tmevolve", "mean", "shuffled_tmevolve"} <= {f["method"] for f in rep["folds"]}
    variants = json.loads((tmp_path / "results/tmevolve/spatial/train/survival/variants/r0.json").read_text())
    assert {f["method"] for f in variants["folds"]} == {"tmevolve_q1_k2"}
    folds = pd.read_csv(tmp_path / "results/tmevolve/spatial/folds.csv", dtype={"slide_id": str})
    fold0 = next(f for f in rep["folds"] if f["fold"] == 0 and f["method"] == "tmevolve")
    assert sorted(fold0["predictions"]["slide_id"]) == sorted(folds.slide_id[(folds.fold == 0) & (folds.repeat == 0)])


@pytest.mark.slow
def test_a_partial_aggregate_builds_no_job_and_reports_what_waits_for_the_missing_ones(smoke_dir, workflow_run, tmp_path):
    workflow_run(smoke_dir, "results/tmevolve/metrics.json")        # a no-op after the smoke DAG test
    for stage in ("tmevolve", "wsi"):                                # the built jobs, mtimes kept, no metadata
        shutil.copytree(smoke_dir / "results" / stage, tmp_path / "results" / stage)
    (tmp_path / "results/tmevolve/metrics.json").unlink()
    (tmp_path / "results/tmevolve/spatial/train/survival/methods/r0.json").unlink()   # survival's methods not built
    dry = workflow_run(tmp_path, "-n", "results/tmevolve/metrics.json", config={"partial": "true"})
    assert scheduled_rules(dry.stdout) == {"tmevolve_aggregate"}, dry.stdout[-3000:]
    workflow_run(tmp_path, "results/tmevolve/metrics.json", config={"partial": "true"})
    metrics = json.loads((tmp_path / "results/tmevolve/metrics.json").read_text())
    assert "spatial/survival/tmevolve" in metrics["partial"]["missing_runs"]
    assert "tmevolve" not in metrics["survival"] and "survival" not in metrics["best_baseline"]
    assert "subtype" in metrics and "tmevolve" in metrics["subtype"]        # what is built is still summarised
    claims = {r.claim.id: r for r in evaluate(load_claims(REPO / "workflow/claims/tmevolve.yaml",
                                                           REPO / "workflow/schemas/claims.schema.yaml"),
                                              tmp_path / "results/tmevolve/metrics.json")}
    assert claims["survival_beats_best_baseline"].status == "NOT RUN"
    assert "partial build" in claims["survival_beats_best_baseline"].reason
    assert claims["beats_abmil_subtype"].status != "NOT RUN" and "partial build" in claims["beats_abmil_subtype"].note
    # without partial the same target builds the missing job first
    dry = workflow_run(tmp_path, "-n", "results/tmevolve/metrics.json")
    assert scheduled_rules(dry.stdout) == {"tmevolve_train", "tmevolve_aggregate"}, dry.stdout[-3000:]
