"""The munkey DAG builds from an empty folder at scale=smoke; a misspelt preset key is refused."""

import json

import pytest
import yaml

from repro.config import preset_error, workflow_config
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/munkey.schema.yaml"
CONFIG = workflow_config(REPO)["munkey"]
TARGETS = ["reports/munkey_fig1.pdf", "reports/munkey_table1.md", "results/munkey/metrics.json"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS)
    metrics = json.loads((smoke_dir / "results/munkey/metrics.json").read_text())
    for regime in ("natural", "finegrained", "medical"):
        assert metrics["weights_changed"][regime]["random10"]["values"] == [0.0, 0.0]
        for method in ("original", "oracle", "finetune", "neggrad", "random_labels", "scrub", "salun", "munkey",
                       "oracle_memory", "knn"):
            assert len(metrics["mia_shadow"][regime]["random10"][method]["values"]) == 2
    table = (smoke_dir / "reports/munkey_table1.md").read_text()
    assert "salun" in table and "medical" in table


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_presets_are_valid(scale):
    import jsonschema

    jsonschema.Draft202012Validator(yaml.safe_load(SCHEMA.read_text())).validate(CONFIG[scale])


def test_remote_regime_without_its_image_set_is_refused():
    preset = dict(CONFIG["small"], regimes=["natural", "remote"])
    assert "remote" not in preset
    assert preset_error(preset, SCHEMA, "munkey.small") == "munkey.small: 'remote' is a required property"


def test_an_image_set_without_a_valid_sha256_is_refused():
    preset = dict(CONFIG["small"], regimes=["remote"], remote={"url": "https://example.org/set.tar.gz", "sha256": "x" * 64})
    assert preset_error(preset, SCHEMA, "munkey.small").startswith("munkey.small.remote.sha256: 'xxxx")


def test_a_misspelt_key_is_rejected_with_its_path():
    preset = dict(CONFIG["small"], model={"epoch": 3})
    assert preset_error(preset, SCHEMA, "munkey.small").startswith("munkey.small.model.epoch: unknown key")
