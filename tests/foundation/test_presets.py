"""Presets live in workflow/presets/<key>.yaml, beneath the user's values; a block's scale is the job's scale."""

import json
from types import SimpleNamespace

import pytest
import yaml

from repro.config import block_scale, load_presets, merge, rule_block, workflow_config
from repro.jobs import Job
from tests.conftest import REPO

PAPERS = yaml.safe_load((REPO / "workflow/papers.yaml").read_text())
BLOCKS = [*PAPERS["stages"], *(p["key"] for p in PAPERS["papers"])]


def test_every_block_has_its_preset_file_and_config_yaml_holds_only_global_keys():
    presets = load_presets(REPO / "workflow/presets")
    assert sorted(presets) == sorted(BLOCKS)
    user = yaml.safe_load((REPO / "config.yaml").read_text())
    assert not set(user) & set(BLOCKS), "paper presets belong in workflow/presets/, not config.yaml"
    for key, block in presets.items():
        assert {"smoke", "small", "paper"} <= set(block), key


def test_a_users_value_is_merged_over_the_preset_key_by_key():
    base = workflow_config(REPO)["cmcboot"]["small"]
    cfg = workflow_config(REPO, {"cmcboot": {"small": {"n_boot": 7, "behaviour": {"sticky": {"stick": 0.1}}}}})
    small = cfg["cmcboot"]["small"]
    assert small["n_boot"] == 7 and small["behaviour"]["sticky"]["stick"] == 0.1
    assert small["behaviour"]["sticky"]["p_start"] == base["behaviour"]["sticky"]["p_start"]  # siblings kept
    assert {k: v for k, v in small.items() if k not in ("n_boot", "behaviour")} == \
        {k: v for k, v in base.items() if k not in ("n_boot", "behaviour")}
    assert cfg["cmcboot"]["smoke"] == workflow_config(REPO)["cmcboot"]["smoke"]


def test_merge_replaces_lists_and_scalars_and_merges_mappings():
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    assert merge(base, {"a": {"c": [3]}, "e": {"f": 1}}) == {"a": {"b": 1, "c": [3]}, "d": 1, "e": {"f": 1}}


def test_a_preset_file_must_hold_one_block_named_after_it(tmp_path):
    (tmp_path / "cmcboot.yaml").write_text("cmcbot: {smoke: {}, small: {}, paper: {}}\n")
    with pytest.raises(ValueError, match=r"cmcboot\.yaml: a preset file holds exactly one block named after the file"):
        load_presets(tmp_path)


@pytest.mark.parametrize("rule, config, expected", [
    ("grokcap_aggregate", {"scale": "small", "grokcap": {"scale": "smoke"}}, "smoke"),
    ("grokcap_aggregate", {"scale": "small", "grokcap": {}}, "small"),
    ("wsi_features", {"scale": "paper", "wsi": {"scale": "small"}}, "small"),
    ("artifact_evaluation", {"scale": "smoke"}, "smoke"),
])
def test_a_job_takes_the_scale_of_its_rules_block(rule, config, expected, tmp_path):
    assert block_scale(config, rule_block(config, rule)) == expected
    smk = SimpleNamespace(log=[str(tmp_path / "job.log")], params=SimpleNamespace(items=lambda: []), wildcards={},
                          threads=1, rule=rule, config={"seed": 1, **config})
    assert Job.from_snakemake(smk).scale == expected


@pytest.mark.slow
def test_a_paper_built_at_its_own_scale_stamps_that_scale_into_its_metrics(tmp_path, workflow_run):
    """Global scale small, immunize's block at smoke: its aggregate (a rule that passes no scale of its own)
    runs the smoke preset and stamps smoke, not the global small, into metrics.json."""
    workflow_run(tmp_path, "results/immunize/metrics.json", scale="small", config={"immunize": "{'scale': 'smoke'}"})
    metrics = json.loads((tmp_path / "results/immunize/metrics.json").read_text())
    assert metrics["provenance"]["scale"] == "smoke"
    units = sorted(p.name for p in (tmp_path / "results/immunize/units").glob("seed*.json"))
    assert len(units) == workflow_config(REPO)["immunize"]["smoke"]["seeds"], units  # the smoke preset's seeds


def test_command_line_strings_are_typed_by_the_schema_only_where_unambiguous(tmp_path):
    """What --config leaves as strings: converted where the schema takes no string, else left to be refused."""
    from repro.config import coerce_to_schema, load_yaml_file

    schema = {"type": "object", "$defs": {"n": {"type": "integer", "minimum": 1}}, "properties": {
        "n": {"$ref": "#/$defs/n"}, "lr": {"type": "number"}, "flag": {"type": "boolean"},
        "name": {"type": "string"}, "either": {"type": ["number", "string"]}, "k": {"type": ["integer", "null"]},
        "size": {"enum": [16, 32]}, "list": {"type": "array", "items": {"type": "number"}},
        "sub": {"type": "object", "additionalProperties": {"type": "integer"}}}}
    got = coerce_to_schema({"n": "3", "lr": "1e-3", "flag": "no", "name": "7", "either": "2", "k": "null",
                            "size": "32", "list": ["0.5", "2"], "sub": {"a": "4"}}, schema)
    assert got == {"n": 3, "lr": 1e-3, "flag": False, "name": "7", "either": "2", "k": None, "size": 32,
                   "list": [0.5, 2], "sub": {"a": 4}}
    # not readable as what the key takes: left as the string, for the schema check to name
    assert coerce_to_schema({"n": "three", "size": "8", "flag": "maybe"}, schema) == \
        {"n": "three", "size": "8", "flag": "maybe"}
    bad = tmp_path / "config.yaml"
    bad.write_text("scale: smoke\ncmcboot:\n  small: {n_boot: 3\n")
    with pytest.raises(ValueError, match=r"config.yaml, line 4, column 1: expected ',' or '}'.*line 3, column 10"):
        load_yaml_file(bad)


def test_a_yaml_syntax_error_in_a_preset_file_names_the_file_and_its_line(tmp_path):
    """The presets are read by our code (check_config -> with_presets), so their syntax errors are named as
    config.yaml's are: the file, the line and the column, not a bare yaml ParserError."""
    from repro.config import load_presets

    (tmp_path / "cmcboot.yaml").write_text("cmcboot:\n  smoke: {n_boot: 3}\n")
    (tmp_path / "gtp.yaml").write_text("gtp:\n  smoke:\n    seeds: [1, 2\n    lr: 0.1\n")
    with pytest.raises(ValueError, match=r"gtp\.yaml, line 4, column 7: expected ',' or '\]'.*line 3, column 12"):
        load_presets(tmp_path)
    (tmp_path / "gtp.yaml").write_text("gtp:\n  smoke:\n    seeds: [1, 2]\n")
    assert load_presets(tmp_path) == {"cmcboot": {"smoke": {"n_boot": 3}}, "gtp": {"smoke": {"seeds": [1, 2]}}}
