"""incrimination's DAG from an empty folder at scale=smoke, the dry runs of every scale, and bad config values."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from repro.claims import load_claims, lookup_metric
from tests.conftest import REPO

TARGETS = ["reports/incrimination_fig1.pdf", "reports/incrimination_fig2.pdf", "reports/incrimination_table1.md",
           "reports/incrimination_table1.csv", "results/incrimination/metrics.json"]


def _counts(stdout: str) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split()[:2] for line in stdout.splitlines() if line.startswith("incrimination_"))}


@pytest.mark.parametrize("scale, n_agents", [("smoke", 1), ("small", 2), ("paper", 2)])
def test_dry_run_fans_out_motives_and_agents(tmp_path, workflow_run, scale, n_agents):
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--quiet", "rules", scale=scale)
    counts = _counts(proc.stdout)
    assert counts["incrimination_testbed"] == 5  # one job per planted motive
    assert counts["incrimination_investigate"] == n_agents
    # SmolLM2 on torch (paper) waits for the LLM stage's cache rule; on llama.cpp (small) it reads the shipped
    # GGUF file; a scripted agent (smoke) needs no model
    assert ("llm_cache" in proc.stdout) == (scale == "paper")


def test_a_claims_level_outside_the_grid_is_refused_by_name(tmp_path, workflow_run):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"incrimination": {"smoke": {"claims": {"faithful": 0.9, "unfaithful": 0.25}}}}))
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), check=False)
    assert proc.returncode != 0
    assert "incrimination.smoke.claims.faithful (0.9) is not one of" in proc.stdout + proc.stderr


def test_an_unknown_environment_is_refused_by_the_schema(tmp_path, workflow_run):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"incrimination": {"smoke": {"environments": ["skip_step", "casino"]}}}))
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), check=False)
    assert proc.returncode != 0
    assert "incrimination.smoke" in proc.stdout + proc.stderr and "casino" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    tmp_path = smoke_dir  # shared with the whole-workflow tests (the AE report reuses these builds)
    workflow_build(tmp_path, TARGETS, scale="smoke")
    metrics = json.loads((tmp_path / "results/incrimination/metrics.json").read_text())
    assert metrics["provenance"]["scale"] == "smoke"
    for claim in load_claims(REPO / "workflow/claims/incrimination.yaml", REPO / "workflow/schemas/claims.schema.yaml"):
        for path in [claim.metric] + ([claim.rhs] if isinstance(claim.rhs, str) else []):
            lookup_metric(metrics, path)  # raises naming the path when it is missing
    # the oracle reads the planted motive; every method is scored on the same cases
    assert set(metrics["headline"]["oracle"]["values"]) == {1.0}
    ids = metrics["headline"]["oracle"]["ids"]
    assert metrics["headline"]["combined_faithful"]["ids"] == metrics["headline"]["cot_unfaithful"]["ids"] == ids
    assert len(ids) == 5 * 6 * 2
    # planted truth: the scripted strategic agent of the smoke preset is found strategic by the interventions
    # in most environments although its CoT (faithfulness 0.25) names its decoy
    table = pd.read_csv(tmp_path / "reports/incrimination_table1.csv")
    assert (table.verdict_interventions_only == "strategic").mean() >= 0.5
    assert (table.verdict_cot_only == "confusion").mean() >= 0.5
    fig2 = pd.read_csv(tmp_path / "reports/incrimination_fig2.csv")
    assert set(fig2.motive) == {"laziness", "confusion", "strategic", "obedience", "benign"}
