"""The opinion DAG builds from an empty folder at scale=smoke, and its outputs say what they should."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from repro.claims import evaluate, load_claims

REPO = Path(__file__).resolve().parents[2]

TARGETS = ["reports/opinion_fig1.pdf", "reports/opinion_fig2.pdf", "reports/opinion_fig3.pdf",
           "reports/opinion_table1.md", "reports/opinion_training.md", "results/opinion/metrics.json"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS)
    results = pd.read_csv(smoke_dir / "results/opinion/results.csv")
    assert {"marl", "marl_noop", "bayes_honest", "degroot", "voter", "majority", "oracle", "random"} <= set(results.method)
    oracle = results[results.method == "oracle"]
    assert (oracle.accuracy == 1.0).all() and (oracle.contrary_rate[oracle.alpha > 0] >= 0).all()
    # at alpha 0 nobody is informed: the contrary rate has no denominator, for every method (missing, not 0)
    assert results[results.alpha == 0].contrary_rate.isna().all()
    assert results.accuracy.between(0, 1).all()
    # every method of one (family, alpha, seed) played the same games: the oracle's agreement is 1 on each
    assert (oracle.agreement == 1.0).all()
    curves = pd.read_csv(smoke_dir / "results/opinion/training.csv")  # per-iteration diagnostics of every agent
    runs = curves.groupby(["family", "alpha", "method", "seed"]).size()
    assert len(runs) == len(results[results.method.isin(["marl", "marl_noop"])]) and runs.nunique() == 1
    assert curves.final_action2.between(0, 1).all() and (curves.approx_kl >= 0).all()
    claims = load_claims(REPO / "workflow/claims/opinion.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    for r in evaluate(claims, smoke_dir / "results/opinion/metrics.json"):
        assert r.status != "NOT RUN" and "summary only" not in r.reason, (r.claim.id, r.reason)


def test_presets_validate_and_a_bad_value_is_named():
    import copy

    import jsonschema
    import yaml

    from repro.config import preset_error, workflow_config

    schema_path = REPO / "workflow/schemas/opinion.schema.yaml"
    schema = yaml.safe_load(schema_path.read_text())
    block = workflow_config(REPO)["opinion"]
    for scale in ("smoke", "small", "paper"):
        jsonschema.validate(block[scale], schema)
        assert block[scale]["attention_alpha"] in block[scale]["alphas"]
    bad = copy.deepcopy(block["small"])
    bad["alphas"] = [0.5, 1.5]
    assert "opinion.small.alphas.1" in preset_error(bad, str(schema_path), "opinion.small")
    bad = copy.deepcopy(block["small"])
    bad["train"]["iteratoins"] = 3
    assert "iteratoins" in preset_error(bad, str(schema_path), "opinion.small")
