"""The modellens DAG builds from an empty folder at scale=smoke; a misspelt preset key is refused."""

import copy
import json

import pandas as pd
import pytest
import yaml

from repro.config import preset_error, workflow_config
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/modellens.schema.yaml"
CONFIG = workflow_config(REPO)["modellens"]

TARGETS = ["reports/modellens_fig1.pdf", "reports/modellens_fig2.pdf", "reports/modellens_fig3.pdf", "reports/modellens_table1.md",
           "reports/modellens_ablations.md", "results/modellens/metrics.json"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS)
    metrics = json.loads((smoke_dir / "results/modellens/metrics.json").read_text())
    oracle = metrics["ndcg"]["unseen_unseen"]["oracle"]["per_unit"]
    assert oracle["unit"] == "seed" and min(oracle["values"]) == pytest.approx(1.0)
    assert set(metrics["ndcg"]["unseen_unseen"]) >= {"modellens", "meta_knn", "popularity", "mf", "random"}
    ablations = pd.read_csv(smoke_dir / "reports/modellens_ablations.csv")
    assert set(ablations.variant) == {"full", *CONFIG["smoke"]["ablations"]} and set(ablations.n_seeds) == {3}


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_presets_are_valid(scale):
    import jsonschema

    jsonschema.Draft202012Validator(yaml.safe_load(SCHEMA.read_text())).validate(CONFIG[scale])


@pytest.mark.parametrize("path", [("seedz",), ("leaderboard", "n_model"), ("method_options", "modellens", "step")])
def test_a_misspelt_key_is_rejected_with_its_path(path):
    preset = copy.deepcopy(CONFIG["small"])
    node = preset
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = 1
    message = preset_error(preset, SCHEMA, "modellens.small")
    assert message.startswith(".".join(("modellens.small", *path)) + ": unknown key"), message


def test_impossible_value_is_refused():
    preset = copy.deepcopy(CONFIG["small"])
    preset["text_encoder"] = "bert"
    assert "text_encoder" in preset_error(preset, SCHEMA, "modellens.small")
