"""driftbench's DAG from an empty folder at scale=smoke, the recompute path on a release fixture,
dry runs of every scale, and bad config values."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from repro.claims import load_claims
from tests.conftest import REPO, scheduled_rules
from tests.driftbench.test_release import write_fixture, write_paper_release
from repro.config import workflow_config

TARGETS = ["reports/driftbench_fig1.pdf", "reports/driftbench_fig2.pdf", "reports/driftbench_table1.md",
           "reports/driftbench_table1.csv", "results/driftbench/metrics.json"]


def _counts(stdout: str) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split()[:2] for line in stdout.splitlines() if line.startswith("driftbench_"))}


@pytest.mark.parametrize("scale, n_models", [("smoke", 3), ("small", 4), ("paper", 3)])
def test_dry_run_fans_out_model_condition(tmp_path, workflow_run, scale, n_models):
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--quiet", "rules", scale=scale)
    counts = _counts(proc.stdout)
    assert counts["driftbench_run"] == counts["driftbench_judge"] == 4 * n_models
    # SmolLM2 beyond smoke runs on llama.cpp from the shipped GGUF file: no cached torch copy to wait for
    assert "llm_cache" not in proc.stdout


def test_a_duplicate_model_is_refused_by_name(tmp_path, workflow_run):
    cfg = workflow_config(REPO)["driftbench"]["smoke"]
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"driftbench": {"smoke": {"models": cfg["models"] + cfg["models"][:1]}}}))
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), check=False)
    assert proc.returncode != 0
    assert "driftbench.smoke.models names ['scripted-drifter'] more than once" in proc.stdout + proc.stderr


def test_remote_source_recomputes_a_release_and_a_missing_one_leaves_nothing(tmp_path, workflow_run):
    overlay = tmp_path / "remote.yaml"
    overlay.write_text(yaml.safe_dump({"driftbench": {"source": "remote", "release_dir": str(tmp_path / "release")}}))
    args = ("--configfile", str(REPO / "config.yaml"), str(overlay))
    proc = workflow_run(tmp_path, "results/driftbench/metrics.json", *args, check=False)
    assert proc.returncode != 0
    assert "release: folder briefs/ does not exist" in (tmp_path / "logs/driftbench/release.log").read_text()
    assert not (tmp_path / "results/driftbench/release.json").exists()
    write_fixture(tmp_path / "release")
    workflow_run(tmp_path, "results/driftbench/metrics.json", "reports/driftbench_table1.csv", *args)
    metrics = json.loads((tmp_path / "results/driftbench/metrics.json").read_text())
    assert metrics["published_max_abs_diff"] == 0.0  # recomputed KBV = the release's own summary
    assert not (tmp_path / "results/driftbench/transcripts").exists()  # no model was run
    # every file of the release is an input: an edited score file rebuilds the release and what reads it
    summary = tmp_path / "release/kbv_summary.csv"
    summary.write_text(summary.read_text() + "\n")
    dry = workflow_run(tmp_path, "results/driftbench/metrics.json", "-n", *args)
    assert {"driftbench_release", "driftbench_aggregate"} <= scheduled_rules(dry.stdout), dry.stdout[-2000:]


def test_remote_source_reads_the_papers_published_layout(tmp_path, workflow_run):
    """The paper's layout through the workflow: its tables from its judge files, its KBV summary matched,
    an edited judge file reruns the release and an edited score file of another judge does not."""
    release = tmp_path / "release"
    write_paper_release(release)
    overlay = tmp_path / "remote.yaml"
    overlay.write_text(yaml.safe_dump({"driftbench": {"source": "remote", "release_dir": str(release)}}))
    args = ("--configfile", str(REPO / "config.yaml"), str(overlay))
    workflow_run(tmp_path, "results/driftbench/metrics.json", "reports/driftbench_table1.csv", *args)
    metrics = json.loads((tmp_path / "results/driftbench/metrics.json").read_text())
    assert metrics["published_max_abs_diff"] == 0.0
    assert metrics["release"]["naming"] == "paper" and metrics["release"]["judged_without_auditor"] == 1
    blind = next((release / "scores").glob("blind_*.jsonl"))
    blind.write_text(blind.read_text() + "\n")
    assert not scheduled_rules(workflow_run(tmp_path, "results/driftbench/metrics.json", "-n", *args).stdout)
    judge = next((release / "scores").glob("judge_*.jsonl"))
    judge.write_text(judge.read_text() + "\n")
    dry = workflow_run(tmp_path, "results/driftbench/metrics.json", "-n", *args)
    assert {"driftbench_release", "driftbench_aggregate"} <= scheduled_rules(dry.stdout), dry.stdout[-2000:]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS, scale="smoke")
    metrics = json.loads((smoke_dir / "results/driftbench/metrics.json").read_text())
    assert metrics["provenance"]["scale"] == "smoke"
    for claim in load_claims(REPO / "workflow/claims/driftbench.yaml", REPO / "workflow/schemas/claims.schema.yaml"):
        for path in [claim.metric] + ([claim.rhs] if isinstance(claim.rhs, str) else []):
            node = metrics
            for part in path.split("."):
                assert part in node, f"{path} missing from metrics.json"
                node = node[part]
            assert node, path
    table = pd.read_csv(smoke_dir / "reports/driftbench_table1.csv")
    # planted: the faithful agent never violates, the forgetful one never 'knows'
    assert (table[table.model == "scripted-faithful"].kbv.dropna() == 0).all()
    assert (table[table.model == "scripted-forgetful"].kbv.dropna() == 0).all()
    assert (table[(table.model == "scripted-drifter") & (table.condition == "multi_turn_pressure")].kbv > 0.5).all()
    assert table[table.condition == "single_shot"].kbv.isna().all()  # single-shot has no probe
