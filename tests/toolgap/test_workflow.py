"""toolgap's DAG from an empty folder at scale=smoke, the dry runs of every scale, and bad config values."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from repro.claims import load_claims
from tests.conftest import REPO

TARGETS = ["reports/toolgap_fig1.pdf", "reports/toolgap_fig2.pdf", "reports/toolgap_table1.md",
           "results/toolgap/metrics.json"]


def _counts(stdout: str) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split()[:2] for line in stdout.splitlines() if line.startswith("toolgap_"))}


@pytest.mark.parametrize("scale, n_tiny, n_models", [("smoke", 3, 3), ("small", 3, 4), ("paper", 3, 4)])
def test_dry_run_fans_out_model_task(tmp_path, workflow_run, scale, n_tiny, n_models):
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--quiet", "rules", scale=scale)
    counts = _counts(proc.stdout)
    assert counts["toolgap_train"] == n_tiny
    assert counts["toolgap_evaluate"] == n_models  # one job per model, both tasks and their probes
    assert "toolgap_probes" not in counts
    # SmolLM2 goes through the LLM stage's cache rule at small and paper scale, never at smoke
    assert ("llm_cache" in proc.stdout) == (scale != "smoke")


def test_an_impossible_threshold_is_refused_by_name(tmp_path, workflow_run):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"toolgap": {"smoke": {"unnecessary_min_correct": 6}}}))
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), check=False)
    assert proc.returncode != 0
    assert "toolgap.smoke.unnecessary_min_correct (6) exceeds toolgap.smoke.samples (5)" in proc.stdout + proc.stderr


def test_a_local_source_without_its_csv_fails_naming_the_file(tmp_path, workflow_run):
    overlay = tmp_path / "local.yaml"
    overlay.write_text(yaml.safe_dump({"toolgap": {"source": "local"}}))
    proc = workflow_run(tmp_path, "results/toolgap/data.json", "--configfile", str(REPO / "config.yaml"), str(overlay),
                        check=False)
    assert proc.returncode != 0
    assert "Missing input files for rule toolgap_data" in proc.stdout + proc.stderr
    assert "resources/toolgap/TruthfulQA.csv" in proc.stdout + proc.stderr
    assert not (tmp_path / "results/toolgap/data.json").exists()
    # an input, not a parameter: Snakemake rebuilds the data job (and all after it) when the user edits the file
    (tmp_path / "resources/toolgap").mkdir(parents=True)
    (tmp_path / "resources/toolgap/TruthfulQA.csv").write_text("Question,Best Answer\n")
    dry = workflow_run(tmp_path, "results/toolgap/data.json", "-n", "--configfile", str(REPO / "config.yaml"), str(overlay))
    job = dry.stdout.split("rule toolgap_data:")[1].split("\n\n")[0]
    assert "input: resources/toolgap/TruthfulQA.csv" in job, job


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_run):
    tmp_path = smoke_dir  # shared with the whole-workflow tests (the AE report reuses these builds)
    workflow_run(tmp_path, *TARGETS, scale="smoke")
    metrics = json.loads((tmp_path / "results/toolgap/metrics.json").read_text())
    assert metrics["provenance"]["scale"] == "smoke"
    # every claim's metric (and path rhs) is in metrics.json; a node may be null or empty only where
    # no pair of this run has a probe to measure it with (named in probe_undefined)
    for claim in load_claims(REPO / "workflow/claims/toolgap.yaml", REPO / "workflow/schemas/claims.schema.yaml"):
        for path in [claim.metric] + ([claim.rhs] if isinstance(claim.rhs, str) else []):
            node = metrics
            for part in path.split("."):
                assert part in node, f"{path} missing from metrics.json"
                node = node[part]
            if not node:
                assert metrics["probe_undefined"], path
    assert set(metrics["mismatch"]) == {f"tiny-w{w}__{t}" for w in (16, 32, 64) for t in ("arithmetic", "knowledge")}
    # planted truth: no model can answer an unseen entity's question, so each is necessary for every model
    for w in (16, 32, 64):
        run = json.loads((tmp_path / f"results/toolgap/runs/tiny-w{w}/knowledge.json").read_text())
        unseen = [r for r in run["records"] if not r["seen"]]
        assert unseen and all(r["necessary"] for r in unseen)
    table = pd.read_csv(tmp_path / "reports/toolgap_table1.csv")
    assert (table.cognition_to_action + table.cognition + table.undecided == table.missed_call + table.over_call).all()
    fig2 = pd.read_csv(tmp_path / "reports/toolgap_fig2.csv")
    assert set(fig2[fig2.panel == "layer"].layer) == {0, 1, 2}
    # the claims' intervals the figures draw are the checker's own on metrics.json, to the last bit
    from repro.claims import interval_rows

    checked = pd.read_csv(tmp_path / "results/toolgap/claim_intervals.csv", float_precision="round_trip")
    want = pd.DataFrame(interval_rows(load_claims(REPO / "workflow/claims/toolgap.yaml",
                                                  REPO / "workflow/schemas/claims.schema.yaml"), metrics))
    assert list(checked.claim) == list(want.claim)
    np.testing.assert_array_equal(checked[["estimate", "low", "high"]].to_numpy(float),
                                  want[["estimate", "low", "high"]].to_numpy(float))
    assert set(fig2[fig2.panel == "claim"].claim) <= set(checked.claim)
    # fig1 draws each mismatch rate with the interval its claim is decided on: Wilson over the pair's items at
    # the Bonferroni level of the six pairs, as the checker computes it from metrics.json
    from repro.claims import evaluate
    from repro.stats.intervals import wilson_interval

    mismatch_claim = "mismatch_substantial_every_model"
    # (the CSV keeps 6 significant digits: repro.tables.save_csv)
    fig1 = pd.read_csv(tmp_path / "reports/toolgap_fig1.csv")
    totals = fig1[fig1.direction == "mismatch"]
    totals = totals.set_index(totals.model + "__" + totals.task)
    assert len(totals) == 6 and (totals.claim == mismatch_claim).all()
    level = 1 - 0.05 / 6
    for key, rate in metrics["mismatch"].items():
        iv = wilson_interval(rate["successes"], rate["trials"], level=level)
        row = totals.loc[key]
        assert [row.rate, row.low, row.high, row.level] == pytest.approx([iv.estimate, iv.low, iv.high, level], rel=1e-5)
        assert row.n == iv.n and row.threshold == 0.2
    claims = load_claims(REPO / "workflow/claims/toolgap.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    (result,) = evaluate([c for c in claims if c.id == mismatch_claim], tmp_path / "results/toolgap/metrics.json")
    shown = totals.loc[result.reason.split("shown: ")[1].split(")")[0]]
    assert [shown.low, shown.high] == pytest.approx([result.interval.low, result.interval.high], rel=1e-5)
