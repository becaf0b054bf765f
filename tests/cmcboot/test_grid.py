"""The grid of settings, and each workflow step running on only its part of the preset (the rules'
params), with the same result as on the whole preset."""

import numpy as np
import pytest

from repro.papers.cmcboot.experiment import aggregate, ground_truth, run_chunk
from repro.papers.cmcboot.grid import (AGGREGATE_KEYS, INTERVAL_KEYS, TRUTH_KEYS, parse_setting, preset_part,
                                       setting_name, settings)
from tests.conftest import REPO
from repro.config import workflow_config

SMOKE = workflow_config(REPO)["cmcboot"]["smoke"]


def test_setting_names_round_trip_and_bad_names_raise():
    assert parse_setting(setting_name(1000, 50, "sticky")) == (1000, 50, "sticky")
    with pytest.raises(ValueError, match="bad setting"):
        parse_setting("n1000_sticky")
    with pytest.raises(ValueError, match="divide"):
        parse_setting("n1000_h30_sticky")
    names = settings(SMOKE)
    assert names == sorted(set(names))
    assert {parse_setting(s)[2] for s in names} == set(SMOKE["policies"])


def test_every_preset_key_is_read_by_some_step():
    """A key no step reads would be a setting that silently does nothing."""
    read = set(TRUTH_KEYS) | set(INTERVAL_KEYS) | set(AGGREGATE_KEYS) | {"methods"}  # methods: the DAG's wildcard
    assert set(SMOKE) <= read, set(SMOKE) - read


def test_each_step_gives_the_same_result_on_its_part_of_the_preset():
    full = ground_truth(SMOKE)
    part = ground_truth(preset_part(SMOKE, TRUTH_KEYS))
    assert full["settings"] == part["settings"]
    for t, value in full["truth"].items():
        np.testing.assert_array_equal(value, part["truth"][t])
    cfg = {**SMOKE, "n_replicates": 4, "n_boot": 10}
    setting = settings(cfg)[0]
    chunks = [run_chunk(c, setting, "clt", 0, data_seed=3, seed=4) for c in (cfg, preset_part(cfg, INTERVAL_KEYS))]
    for variant, by_target in chunks[0]["results"].items():
        for t, by_level in by_target.items():
            for lk, v in by_level.items():
                other = chunks[1]["results"][variant][t][lk]
                np.testing.assert_array_equal(v["covered"], other["covered"])
                np.testing.assert_array_equal(v["width_sum"], other["width_sum"])
    table_full, metrics_full = aggregate(chunks[:1], cfg)
    table_part, metrics_part = aggregate(chunks[:1], preset_part(cfg, AGGREGATE_KEYS))
    assert table_full.equals(table_part) and metrics_full == metrics_part
