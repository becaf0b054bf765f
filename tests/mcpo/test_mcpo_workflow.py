"""The mcpo DAG builds from an empty folder at scale=smoke; a misspelt or impossible preset value is refused."""

import copy
import functools
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from repro.claims import interval_rows, load_claims
from repro.config import preset_error, workflow_config
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/mcpo.schema.yaml"
CONFIG = workflow_config(REPO)["mcpo"]
TARGETS = ["reports/mcpo_fig1.pdf", "reports/mcpo_fig2.pdf", "reports/mcpo_fig3.pdf", "reports/mcpo_table1.md",
           "results/mcpo/metrics.json"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS)
    metrics = json.loads((smoke_dir / "results/mcpo/metrics.json").read_text())
    # the oracle is pi* itself: zero divergence on every seed; the floor pi_ref is the starting point
    oracle = metrics["kl_reverse"]["pi_star"]["per_unit"]
    assert oracle["unit"] == "seed" and max(oracle["values"]) == pytest.approx(0.0, abs=1e-9)
    assert set(metrics["pass1"]) >= {"alpha0", "alpha1", "rloo", "pi_star", "pi_ref"}
    # training toward pi* lowers the divergence to it from the reference's on every seed
    for key in ("alpha0", "alpha1"):
        trained = metrics["kl_reverse"][key]["per_unit"]["values"]
        floor = metrics["kl_reverse"]["pi_ref"]["per_unit"]["values"]
        assert all(t < f for t, f in zip(trained, floor)), key
    # task (ii) on the tiny reference: the oracle pi* is the planted target, its forms the reference's
    arith = metrics["arithmetic"]
    assert max(arith["kl_reverse"]["pi_star"]["per_unit"]["values"]) == pytest.approx(0.0, abs=1e-9)
    assert max(arith["form_tv"]["pi_ref"]["per_unit"]["values"]) == pytest.approx(0.0, abs=1e-9)
    assert set(arith["pass1"]) == {"alpha0", "alpha1", "rloo", "pi_star", "pi_ref"}
    # task (iii) on the tiny base with planted refusal rates: both references, pi* exact, the signed gap per seed
    safety = metrics["safety"]
    assert safety["references"] == ["cautious", "compliant"]
    for ref in ("cautious", "compliant"):
        assert max(safety[ref]["kl_reverse"]["pi_star"]["per_unit"]["values"]) == pytest.approx(0.0, abs=1e-9)
    gap = safety["reference_gap"]["over_refusal"]
    assert gap["unit"] == "seed" and len(gap["values"]) == CONFIG["smoke"]["safety"]["seeds"]
    # the cautious prefix's planted over-refusal shows in its reference on every seed
    ref_gap = [c - p for c, p in zip(safety["cautious"]["over_refusal"]["pi_ref"]["per_unit"]["values"],
                                     safety["compliant"]["over_refusal"]["pi_ref"]["per_unit"]["values"])]
    assert min(ref_gap) > 0, ref_gap
    # the claims read how the fits move: the level gap is the change gap plus the references' own gap, seed by seed
    for name in ("change_gap", "slope_gap"):
        assert safety[name]["over_refusal"]["unit"] == "seed" and safety[name]["over_refusal"]["ids"] == gap["ids"]
    np.testing.assert_allclose(np.subtract(gap["values"], safety["change_gap"]["over_refusal"]["values"]), ref_gap)
    # the figures draw each claim's quantity with the interval its verdict is decided on: the aggregate's table holds
    # interval_rows of metrics.json to the last bit, and each figure's CSV its rows (at smoke, 2-3 seeds: no
    # interval, the paired mean kept)
    claims = load_claims(REPO / "workflow/claims/mcpo.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    table = pd.read_csv(smoke_dir / "results/mcpo/claim_intervals.csv", float_precision="round_trip")
    want = pd.DataFrame(interval_rows(claims, metrics))
    assert list(table["claim"]) == list(want["claim"]) == [c.id for c in claims]
    np.testing.assert_array_equal(table[["estimate", "low", "high", "n"]].to_numpy(float),
                                  want[["estimate", "low", "high", "n"]].to_numpy(float))
    drawn = pd.concat([pd.read_csv(smoke_dir / f"reports/mcpo_fig{i}.csv") for i in (1, 2, 3)])
    drawn = drawn[drawn["panel"] == "claim"].set_index("claim")
    assert set(drawn.index) == set(want["claim"])  # every claim is drawn, once
    np.testing.assert_allclose(drawn.loc[want["claim"], "mean"], want["estimate"], rtol=1e-5)  # the CSV's 6 digits
    assert drawn["low"].isna().all() and drawn["interval"].str.startswith("none").all()


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_presets_are_valid(scale):
    import jsonschema

    jsonschema.Draft202012Validator(yaml.safe_load(SCHEMA.read_text())).validate(CONFIG[scale])


@pytest.mark.parametrize("dotted", ["seedz", "bandit.task.n_prompt", "bandit.train.step", "arithmetic.train.step",
                                    "arithmetic.model.nam", "safety.task.n_pairs", "safety.train.step"])
def test_a_misspelt_key_is_rejected_with_its_path(dotted):
    preset = copy.deepcopy(CONFIG["small"])
    *parents, leaf = dotted.split(".")
    functools.reduce(dict.__getitem__, parents, preset)[leaf] = 1
    message = preset_error(preset, SCHEMA, "mcpo.small")
    assert message.startswith(f"mcpo.small.{dotted}: unknown key"), message


def test_an_unknown_reference_kind_is_refused():
    preset = copy.deepcopy(CONFIG["small"])
    preset["arithmetic"]["model"]["kind"] = "huge"
    assert "arithmetic.model.kind" in preset_error(preset, SCHEMA, "mcpo.small")


def test_a_sweep_without_the_reverse_kl_end_is_refused():
    preset = copy.deepcopy(CONFIG["small"])
    preset["bandit"]["alphas"] = [0.5, 1.0]
    assert "alphas" in preset_error(preset, SCHEMA, "mcpo.small")
