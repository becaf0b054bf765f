"""collapse's DAG from an empty folder at scale=smoke, and the dry runs of every scale."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from repro.claims import evaluate, load_claims

REPO = Path(__file__).resolve().parents[2]
TARGETS = ["reports/collapse_fig1.pdf", "reports/collapse_fig2.pdf", "reports/collapse_fig3.pdf",
           "reports/collapse_fig4.pdf", "reports/collapse_table1.md", "results/collapse/metrics.json"]


@pytest.mark.parametrize("scale, n_runs, n_neural", [("smoke", 6, 6), ("small", 120, 54), ("paper", 700, 300)])
def test_dry_run_fans_out_injection_by_replicate(tmp_path, workflow_run, scale, n_runs, n_neural):
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--quiet", "rules", scale=scale)
    counts = dict(line.split()[:2] for line in proc.stdout.splitlines() if line.startswith("collapse_"))
    assert int(counts["collapse_recursion"]) == n_runs  # injections x replicates: 2*3, 5*24, 7*100
    assert int(counts["collapse_neural"]) == n_neural  # models x fractions x seeds: 3*2*1, 3*3*6, 3*5*20
    assert int(counts["collapse_neural_data"]) == 1


def test_remote_source_needs_its_image_set(tmp_path, workflow_run):
    overlay = tmp_path / "remote.yaml"
    overlay.write_text(yaml.safe_dump({"collapse": {"source": "remote"}}))
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), check=False)
    assert proc.returncode != 0 and "collapse.<scale>.neural.remote" in proc.stdout + proc.stderr


@pytest.mark.parametrize("bad, named", [({"n": 1}, "collapse.smoke"), ({"n_gens": 5}, "n_gens"),
                                        ({"diagnose_injections": [0.3]}, "collapse.diagnose_injections"),
                                        ({"neural": {"models": ["gan"]}}, "gan"),
                                        ({"neural": {"injections": [0.4]}}, "must start with 0")])
def test_bad_preset_value_is_named(tmp_path, workflow_run, bad, named):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"collapse": {"smoke": bad}}))
    proc = workflow_run(tmp_path, *TARGETS, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), check=False)
    assert proc.returncode != 0 and named in proc.stdout + proc.stderr


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_run):
    tmp_path = smoke_dir
    workflow_run(tmp_path, *TARGETS, scale="smoke")
    metrics = json.loads((tmp_path / "results/collapse/metrics.json").read_text())
    assert metrics["n_runs"] == 6 and metrics["provenance"]["scale"] == "smoke"
    gens = pd.read_csv(tmp_path / "results/collapse/generations.csv")
    assert set(gens.inject) == {0.0, 0.4} and gens.generation.max() == 8
    assert gens[gens.diagnosed].llc.notna().any()
    for fig in ("fig1", "fig2", "fig3"):
        assert (tmp_path / f"reports/collapse_{fig}.csv").exists()
    table = (tmp_path / "reports/collapse_table1.md").read_text()
    assert "survival" in table and "neural vade: AUC of low cluster curvature" in table
    results = evaluate(load_claims(REPO / "workflow/claims/collapse.yaml", REPO / "workflow/schemas/claims.schema.yaml"),
                       tmp_path / "results/collapse/metrics.json")
    status = {r.claim.id: r.status for r in results}
    for model in ("vae", "vade", "ddpm"):  # one seed at smoke: measured, never decided
        assert status[f"neural_injection_stabilises_distribution_{model}"] == "INCONCLUSIVE"
    neural = pd.read_csv(tmp_path / "results/collapse/neural_generations.csv")
    assert set(neural.model) == {"vae", "vade", "ddpm"} and set(neural.inject) == {0.0, 0.4}
    assert neural.groupby("model").llc.count().min() >= 2  # generations 0 and G diagnosed
