"""The testbed run and its aggregation: paired cases across methods and settings, floors and ceilings."""

from __future__ import annotations

import pytest

from repro.papers.incrimination.experiment import simulate_motive, summarise

CFG = {"environments": ["skip_step", "reward_hack"], "seeds": 3, "faithfulness": [0.25, 0.75, 1.0],
       "samples": [5, 60], "protocol": {}, "claims": {"faithful": 0.75, "unfaithful": 0.25}}


@pytest.fixture(scope="module")
def testbed():
    return [simulate_motive(m, CFG, seed=7) for m in ("laziness", "strategic", "confusion", "obedience", "benign")]


def test_every_method_and_setting_is_scored_on_the_same_cases(testbed):
    metrics, fig1, fig2, _ = summarise(testbed, {}, CFG)
    ids = metrics["headline"]["oracle"]["ids"]
    assert len(ids) == len(set(ids)) == 5 * 2 * 3
    for key in ("combined_faithful", "cot_unfaithful", "interventions_unfaithful", "random",
                "abstain_minus_wrong_few", "cot_accuracy_vs_faithfulness"):
        assert metrics["headline"][key]["ids"] == ids, key
    assert metrics["headline"]["oracle"]["values"] == [1.0] * len(ids)
    assert {r["cases"] for r in fig1} == {len(ids)}
    # fingerprints: one effect per environment x seed, the same units for every motive
    assert metrics["fingerprint"]["detectable"]["strategic"]["ids"] == metrics["fingerprint"]["detectable"]["benign"]["ids"]


def test_same_seed_same_testbed_and_the_seed_matters():
    a, b = simulate_motive("laziness", CFG, seed=3), simulate_motive("laziness", CFG, seed=3)
    assert a == b
    assert simulate_motive("laziness", CFG, seed=4)["effects"] != a["effects"]


def test_planted_fingerprints_show_in_the_effects(testbed):
    metrics, *_ = summarise(testbed, {}, CFG)
    fp = metrics["fingerprint"]
    mean = {f: {m: sum(s["values"]) / len(s["values"]) for m, s in fp[f].items()} for f in fp}
    assert mean["low_effort"]["laziness"] > 0.3 > abs(mean["low_effort"]["strategic"])
    assert mean["detectable"]["strategic"] > 0.3 > abs(mean["detectable"]["confusion"])
    assert mean["clarified"]["confusion"] > 0.3 > abs(mean["clarified"]["obedience"])


def test_bad_grids_are_refused_by_name():
    with pytest.raises(ValueError, match="faithfulness: 1.5 is not in"):
        simulate_motive("benign", {**CFG, "faithfulness": [1.5]}, seed=0)
    with pytest.raises(ValueError, match="'samples' is empty"):
        simulate_motive("benign", {**CFG, "samples": []}, seed=0)
    with pytest.raises(ValueError, match="unknown motive 'greed'"):
        simulate_motive("greed", CFG, seed=0)
