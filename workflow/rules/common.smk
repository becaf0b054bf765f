# Helpers shared by the rule files (paths, presets, per-block validation, the target registry).
import sys
from pathlib import Path

from snakemake.utils import validate

REPO = Path(workflow.basedir)  # the checkout; the working directory (results/, reports/) may be elsewhere
SRC = str(REPO / "src")
sys.path.insert(0, SRC)
from repro.runtime import configure_environment

configure_environment(SRC, offline=config.get("offline", True))

SCALES = ("smoke", "small", "paper")

# Every rules/<key>.smk registers its final targets here: rule all and the AE report read it.
PAPER_TARGETS = {}


def repo_path(relative):
    """A file of the checkout (claims, schemas, registries) as an absolute path."""
    return str(REPO / relative)


def scale_of(key):
    """The scale of one paper (its own `scale:` overrides the global one)."""
    return config[key].get("scale", config["scale"])


def preset(key, *path):
    """The value at `path` in paper `key`'s preset for its scale, e.g. preset("cmcboot", "n_reps")."""
    node = config[key][scale_of(key)]
    for part in path:
        if part not in node:
            raise ValueError(f"config: {key}.{scale_of(key)} has no key {'.'.join(path)!r}")
        node = node[part]
    return node


def validate_block(key):
    """Check all three presets of block `key` against workflow/schemas/<key>.schema.yaml."""
    for scale in SCALES:
        try:
            validate(config[key][scale], f"../schemas/{key}.schema.yaml")
        except Exception as err:
            raise ValueError(f"config: invalid {key}.{scale}: {err}") from None


def register_targets(key, targets):
    """Record paper `key`'s final targets (figures, tables, metrics)."""
    if key in config:
        validate_block(key)
    PAPER_TARGETS[key] = list(targets)


def all_targets():
    return [t for targets in PAPER_TARGETS.values() for t in targets] + [
        "reports/artifact_evaluation.md",
        "reports/artifact_evaluation.html",
    ]
