"""repro.canary: the caps a paper's canary merges over its paper preset, and the work ratio that scales runtime."""

import pytest

from repro.canary import load_canaries, mode, overlay, scale_up
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/canary.schema.yaml"


@pytest.mark.parametrize(("value", "expected"), [(False, None), ("false", None), (True, "paper"), ("true", "paper"),
                                                 ("True", "paper"), ("smoke", "smoke")])
def test_mode_reads_the_command_lines_words(value, expected):
    assert mode(value) == expected


def test_an_unknown_mode_is_refused_by_name():
    with pytest.raises(ValueError, match="config.canary: 'yes please' is not one of"):
        mode("yes please")


def test_scale_up_is_the_product_of_ratios_and_a_slash_divides():
    preset = {"n_replicates": 1000, "n_chunks": 10, "train": {"steps": 2000}, "seeds": [0, 1, 2, 3]}
    capped = {"n_replicates": 1, "n_chunks": 1, "train": {"steps": 5}, "seeds": [0]}
    assert scale_up(preset, capped, []) == 1.0
    assert scale_up(preset, capped, ["n_replicates", "/n_chunks"]) == pytest.approx(100.0)
    assert scale_up(preset, capped, ["train.steps"]) == pytest.approx(400.0)
    assert scale_up(preset, capped, ["seeds"]) == pytest.approx(4.0)  # a list counts as its length


def test_scale_up_names_a_missing_path_and_refuses_a_zero():
    with pytest.raises(ValueError, match="no value at 'train.epochs'"):
        scale_up({"train": {}}, {"train": {}}, ["train.epochs"])
    with pytest.raises(ValueError, match="positive"):
        scale_up({"steps": 10}, {"steps": 0}, ["steps"])


def test_smoke_caps_go_over_the_paper_caps(tmp_path):
    (tmp_path / "demo.yaml").write_text(
        "demo:\n  why: fewer steps\n  caps: {train: {steps: 5, batch: 64}, seeds: 1}\n  smoke: {train: {batch: 4}}\n")
    canaries = load_canaries(tmp_path, ["demo", "other"], SCHEMA)
    assert list(canaries) == ["demo"]  # a block without a file has no canary
    assert overlay(canaries, "paper") == {"demo": {"paper": {"train": {"steps": 5, "batch": 64}, "seeds": 1}}}
    assert overlay(canaries, "smoke") == {"demo": {"paper": {"train": {"steps": 5, "batch": 4}, "seeds": 1}}}


def test_a_canary_file_must_name_its_block_and_match_the_schema(tmp_path):
    (tmp_path / "demo.yaml").write_text("other:\n  why: x\n  caps: {}\n")
    with pytest.raises(ValueError, match=r"demo.yaml: a canary file holds exactly one block named after the file \(demo:\)"):
        load_canaries(tmp_path, ["demo"], SCHEMA)
    (tmp_path / "demo.yaml").write_text("demo:\n  caps: {steps: 1}\n  scale_up: {demo_train: steps}\n")
    with pytest.raises(ValueError, match="demo"):
        load_canaries(tmp_path, ["demo"], SCHEMA)


def test_every_canary_file_of_the_workflow_is_valid_and_its_ratios_resolve():
    import yaml

    from repro.config import workflow_config

    listed = yaml.safe_load((REPO / "workflow/papers.yaml").read_text())
    blocks = [*listed["stages"], *(p["key"] for p in listed["papers"])]
    canaries = load_canaries(REPO / "workflow/canary", blocks, SCHEMA)
    assert canaries, "no canary files"
    presets = workflow_config(REPO)
    for which in ("paper", "smoke"):
        capped = workflow_config(REPO, overlay(canaries, which))
        for key, canary in canaries.items():
            for rule, paths in canary["scale_up"].items():
                assert rule.startswith(f"{key}_"), f"{key}'s canary scales rule {rule} of another block"
                factor = scale_up(presets[key]["paper"], capped[key]["paper"], paths, f"{key}.{rule}")
                assert which == "smoke" or factor >= 1.0, f"{key}'s canary does more work in {rule} than its paper preset"
