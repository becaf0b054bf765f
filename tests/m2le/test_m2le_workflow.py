"""The m2le DAG builds from an empty folder at scale=smoke; presets validate; a misspelt key is refused."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from repro.claims import interval_rows, load_claims
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
    # the figures draw each claim's quantity with the interval its verdict is decided on: the aggregate's table holds
    # interval_rows of metrics.json to the last bit, and the figures' CSVs its rows (at smoke, 2 seeds: no interval,
    # the paired mean kept)
    claims = load_claims(REPO / "workflow/claims/m2le.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    table = pd.read_csv(smoke_dir / "results/m2le/claim_intervals.csv", float_precision="round_trip")
    want = pd.DataFrame(interval_rows(claims, metrics)).set_index("claim")
    own = table.dropna(subset=["claim"]).set_index("claim")
    assert set(own.index) == set(want.index)
    np.testing.assert_array_equal(own.loc[want.index, ["estimate", "low", "high", "n"]].to_numpy(float),
                                  want[["estimate", "low", "high", "n"]].to_numpy(float))
    fig1 = pd.read_csv(smoke_dir / "reports/m2le_fig1.csv")
    drawn = fig1[fig1["panel"] == "claim"].set_index("claim")
    assert set(drawn.index) == set(want.index) - {"modulation_far_from_uniform"}
    np.testing.assert_allclose(drawn["mean"], want.loc[drawn.index, "estimate"], rtol=1e-5)  # the CSV's 6 digits
    assert drawn["low"].isna().all() and drawn["interval"].str.startswith("none").all()
    fig2 = pd.read_csv(smoke_dir / "reports/m2le_fig2.csv")
    spread = fig2[fig2["panel"] == "claim"].set_index("sequence")
    assert set(spread.index) == set(CONFIG["smoke"]["sequences"]) and spread["claim"].dropna().tolist() == [
        "modulation_far_from_uniform"]


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_presets_are_valid(scale):
    import jsonschema

    jsonschema.Draft202012Validator(yaml.safe_load(SCHEMA.read_text())).validate(CONFIG[scale])


def test_a_misspelt_key_is_rejected_with_its_path():
    preset = dict(CONFIG["small"], train={"epoch": 3})
    assert preset_error(preset, SCHEMA, "m2le.small").startswith("m2le.small.train.epoch: unknown key")


def test_small_sequences_are_long_enough():
    assert all(s["n_tasks"] >= 10 for k, s in CONFIG["small"]["sequences"].items() if k != "split_digits")
