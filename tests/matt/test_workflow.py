"""matt's DAG from an empty folder at scale=smoke, the dry runs of every scale, and a bad preset."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from repro.claims import load_claims, lookup_metric
from tests.conftest import REPO

TARGETS = [
    "reports/matt_fig1.pdf",
    "reports/matt_table1.md",
    "reports/matt_table1.csv",
    "reports/matt_table2.md",
    "reports/matt_table2.csv",
    "results/matt/metrics.json",
]


@pytest.mark.parametrize("scale, n_transfer, cached", [("smoke", 8, False), ("small", 8, True), ("paper", 12, True)])
def test_dry_run_fans_out_method_seed(tmp_path, workflow_run, scale, n_transfer, cached):
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--quiet", "rules", scale=scale)
    counts = {k: int(v) for k, v in (line.split()[:2] for line in proc.stdout.splitlines() if line.startswith("matt_"))}
    assert counts["matt_transfer"] == n_transfer and counts["matt_source"] == 1
    # the paper's comparison: one calibration, then both arms for every seed (the variant's seeds)
    assert counts["matt_calibrate"] == 1 and counts["matt_matched"] == 2 * n_transfer // 4
    assert ("llm_cache" in proc.stdout) == cached  # SmolLM2 at small and paper, the tiny source at smoke


def test_an_unknown_method_is_refused_by_name(tmp_path, workflow_run):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"matt": {"smoke": {"methods": ["mean", "zett"]}}}))
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), check=False)
    assert proc.returncode != 0
    assert "matt.smoke" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS, scale="smoke")
    metrics = json.loads((smoke_dir / "results/matt/metrics.json").read_text())
    assert metrics["provenance"]["scale"] == "smoke"
    for claim in load_claims(REPO / "workflow/claims/matt.yaml", REPO / "workflow/schemas/claims.schema.yaml"):
        parts = claim.metric.split(".")
        if len(parts) > 1 and parts[1] in metrics.get("recovery_undefined", []):
            continue
        assert lookup_metric(metrics, claim.metric) is not None, claim.id
    table = pd.read_csv(smoke_dir / "reports/matt_table1.csv")
    assert set(table.method) == {"mean", "fvt", "focus", "matt"}
    # every method reached every budget; MATT's tokens include its warm-up and never pass a budget
    for _, row in table.iterrows():
        assert row.tokens <= max(row.budget_tokens, metrics["aim"]["tokens"])
    assert metrics["aim"]["tokens"] > 0 and metrics["aim"]["loss_first"] > 0
    # the same seed (hence the same items and batches) for every method: FOCUS and MATT start equal
    run_f = json.loads((smoke_dir / "results/matt/runs/focus/0.json").read_text())
    run_m = json.loads((smoke_dir / "results/matt/runs/matt/0.json").read_text())
    assert run_f["seed"] == run_m["seed"]
    # the paper's comparison: both arms paired on the variant's seeds, AIM for its preset steps, next-token
    # training for the calibrated steps, each run's training CPU time recorded
    matched = metrics["matched"]
    calibration = json.loads((smoke_dir / "results/matt/matched/calibration.json").read_text())
    assert matched["steps"] == {"matt": 16, "focus_ntp": calibration["ntp_steps"]}
    assert json.loads((smoke_dir / "results/matt/matched/matt/0.json").read_text())["seed"] == run_f["seed"]
    assert all(v > 0 for v in matched["cpu_ratio_ntp_over_aim"]["values"])
    assert set(pd.read_csv(smoke_dir / "reports/matt_table2.csv").arm) == {"matt", "focus_ntp"}
    # fig1 draws each claim on the token-budget variant with the interval its verdict is decided on (the CSV
    # keeps 6 significant digits: repro.tables.save_csv)
    from repro.claims import evaluate
    from repro.papers.matt.experiment import FIG1_CLAIMS

    fig1 = pd.read_csv(smoke_dir / "reports/matt_fig1.csv")
    drawn = fig1[fig1.quantity == "claim"].set_index("claim")
    assert list(drawn.index) == list(FIG1_CLAIMS)
    claims = load_claims(REPO / "workflow/claims/matt.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    for r in evaluate([c for c in claims if c.id in FIG1_CLAIMS], smoke_dir / "results/matt/metrics.json"):
        row, iv = drawn.loc[r.claim.id], r.interval
        assert iv is not None and [row.estimate, row.low, row.high, row.level] == \
            pytest.approx([iv.estimate, iv.low, iv.high, iv.level], rel=1e-5), r.claim.id
        assert row.n == iv.n and row.status == r.status
