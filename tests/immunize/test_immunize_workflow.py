"""The immunize DAG builds from an empty folder at scale=smoke; a misspelt preset key is refused."""

import json

import pandas as pd
import pytest
import yaml

from repro.config import preset_error, workflow_config
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/immunize.schema.yaml"
CONFIG = workflow_config(REPO)["immunize"]
TARGETS = ["reports/immunize_fig1.pdf", "reports/immunize_fig2.pdf", "reports/immunize_table1.md",
           "results/immunize/metrics.json", "results/immunize/diagnostics.csv", "results/immunize/diagnostics_summary.md"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS)
    metrics = json.loads((smoke_dir / "results/immunize/metrics.json").read_text())
    # every model's estimator recorded during immunization agrees with the closed form Z^T Z / n
    models, methods = CONFIG["smoke"]["models"], CONFIG["smoke"]["methods"]
    assert set(models) == {"linear", "mlp", "transformer"}  # smoke exercises every model's path
    for model in models:
        for method in methods:
            assert max(metrics[model]["lanczos_err_harmful_after"][method]["values"]) < 1e-6
    # every model and defence is paired on the same seeds, and every claim's metric exists at smoke
    ids = {tuple(metrics[mo]["benign_acc"][m]["ids"]) for mo in models for m in methods}
    assert ids == {("0", "1")}
    from repro.claims import MetricMissing, load_claims, lookup_metric

    for claim in load_claims(REPO / "workflow/claims/immunize.yaml", REPO / "workflow/schemas/claims.schema.yaml"):
        try:
            lookup_metric(metrics, claim.metric)
        except MetricMissing:
            pytest.fail(f"claim {claim.id}: metric {claim.metric} missing from the smoke build")
    # the diagnostics read every seed's trained defences: one row per seed, model and defence
    table = pd.read_csv(smoke_dir / "results/immunize/diagnostics.csv")
    assert len(table) == 2 * len(models) * len(methods)
    assert set(zip(table["seed"], table["model"], table["method"])) == {
        (s, mo, m) for s in (0, 1) for mo in models for m in methods}


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_presets_are_valid(scale):
    import jsonschema

    jsonschema.Draft202012Validator(yaml.safe_load(SCHEMA.read_text())).validate(CONFIG[scale])


def test_a_misspelt_key_is_rejected_with_its_path():
    preset = dict(CONFIG["small"], immunize={"steps": 3, "lr": 0.1, "w_plateu": 1.0})
    assert preset_error(preset, SCHEMA, "immunize.small").startswith("immunize.small.immunize.w_plateu: unknown key")
