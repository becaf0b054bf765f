"""docs/config.md is generated from the schemas and presets, and the committed page is current."""

from repro.config import load_presets
from repro.configdoc import render
from tests.conftest import REPO


def test_the_committed_config_reference_is_current():
    assert (REPO / "docs/config.md").read_text(encoding="utf-8") == render(REPO), (
        "docs/config.md is stale: run `python -m repro.configdoc`")


def test_every_preset_key_of_every_block_is_documented():
    text = render(REPO)
    presets = load_presets(REPO / "workflow/presets")
    for key, block in presets.items():
        assert f"## `{key}`" in text, key
        for scale in ("smoke", "small", "paper"):
            for name in block[scale]:
                assert f"| `{name}" in text.split(f"## `{key}`")[1].split("\n## ")[0], f"{key}.{scale}.{name}"
