"""The m2le DAG builds from an empty folder at scale=smoke; presets validate; a misspelt key is refused."""

import json

import pytest
import yaml

from repro.config import preset_error, workflow_config
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/m2le.schema.yaml"
CONFIG = workflow_config(REPO)["m2le"]
TARGETS = ["reports/m2le_fig1.pdf", "reports/m2le_fig2.pdf", "reports/m2le_table1.md", "results/m2le/metrics.json"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS)
    metrics = json.loads((smoke_dir / "results/m2le/metrics.json").read_text())
    for sequence in CONFIG["smoke"]["sequences"]:
        for method in CONFIG["smoke"]["methods"]:
            acc = metrics["avg_acc"][sequence][method]
            assert acc["ids"] == ["0", "1"] and all(0 <= v <= 1 for v in acc["values"])
        assert len(metrics["tsp_gain"][sequence]["values"]) == 2
    assert "joint" not in metrics["forgetting"]["blocks"]  # the ceiling has no sequence to forget along


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_presets_are_valid(scale):
    import jsonschema

    jsonschema.Draft202012Validator(yaml.safe_load(SCHEMA.read_text())).validate(CONFIG[scale])


def test_a_misspelt_key_is_rejected_with_its_path():
    preset = dict(CONFIG["small"], train={"epoch": 3})
    assert preset_error(preset, SCHEMA, "m2le.small").startswith("m2le.small.train.epoch: unknown key")


def test_small_sequences_are_long_enough():
    assert all(s["n_tasks"] >= 10 for k, s in CONFIG["small"]["sequences"].items() if k != "split_digits")
