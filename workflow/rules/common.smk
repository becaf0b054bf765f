# Helpers shared by the rule files (paths, presets, per-block validation, the target registry).
import sys
from pathlib import Path

import yaml
from snakemake.utils import validate

REPO = Path(workflow.basedir)  # the checkout; the working directory (results/, reports/) may be elsewhere
SRC = str(REPO / "src")
sys.path.insert(0, SRC)
from repro.runtime import configure_environment
from repro.config import block_scale, coerce_workflow_config, preset_error, schema_error
from repro.config import merge, unknown_top_level_keys, with_presets
from repro.data.sidecar import sidecar_path
from repro import canary as canary_caps

SCALES = ("smoke", "small", "paper")
GLOBAL_KEYS = ("scale", "seed", "device", "offline", "partial", "canary")
PAPERS_YAML = yaml.safe_load((REPO / "workflow/papers.yaml").read_text(encoding="utf-8"))
BLOCKS = [*PAPERS_YAML["stages"], *(p["key"] for p in PAPERS_YAML["papers"])]


def check_config():
    """Check the configuration before the rule files read it (known top-level keys), put the presets
    beneath the user's values, type the strings Snakemake's --config leaves, check the global keys.

    Every error is one line naming the key: a misspelt key with the key it could be (``unknown key
    'scal' (did you mean 'scale'?)``), a wrong value with its path (``config.offline: 'maybe' is not
    of type 'boolean'``). Each block's presets are checked by register_targets (validate_block).
    """
    unknown = unknown_top_level_keys(config, GLOBAL_KEYS, BLOCKS)
    if unknown:
        raise ValueError(unknown)
    with_canary()
    with_presets(config, REPO / "workflow/presets")  # each block's presets, beneath the user's values
    coerce_workflow_config(config, REPO / "workflow/schemas", SCALES)  # --config's "false", "3", ...
    error = schema_error(config, REPO / "workflow/schemas/config.schema.yaml", "config")
    if error:
        raise ValueError(error)


def with_canary():
    """At canary=true (or smoke), scale=paper and each paper's canary caps beneath the user's values (repro.canary)."""
    which = canary_caps.mode(config.get("canary", False))
    if which is None:
        return
    if Path.cwd().resolve() == REPO.resolve():
        raise ValueError(
            "config.canary: a canary's capped runs are not the paper's results; run it in a folder of "
            "its own: python -m repro.canary (or snakemake --directory <folder> ...)"
        )
    other = [k for k in BLOCKS if isinstance(config.get(k), dict) and config[k].get("scale", "paper") != "paper"]
    if other:
        raise ValueError(f"config.canary runs every paper at scale paper; {', '.join(other)} set another scale")
    canaries = canary_caps.load_canaries(REPO / "workflow/canary", BLOCKS, REPO / "workflow/schemas/canary.schema.yaml")
    merged = merge(canary_caps.overlay(canaries, which), config)
    config.clear()
    config.update(merged, scale="paper")


check_config()
configure_environment(SRC, offline=config.get("offline", True))

# Every rules/<key>.smk registers its final targets here: rule all and the AE report read it.
PAPER_TARGETS = {}


def repo_path(relative):
    """A file of the checkout (claims, schemas, registries) as an absolute path."""
    return str(REPO / relative)


def scale_of(key):
    """The scale of one paper (its own `scale:` overrides the global one); jobs stamp the same one."""
    return block_scale(config, key)


def preset(key, *path):
    """The value at `path` in paper `key`'s preset for its scale, e.g. preset("cmcboot", "n_reps")."""
    node = config[key][scale_of(key)]
    for part in path:
        if part not in node:
            raise ValueError(f"config: {key}.{scale_of(key)} has no key {'.'.join(path)!r}")
        node = node[part]
    return node


def preset_slice(key, *names, **paths):
    """{name: preset(key, name)} for each of `names`: the part of paper `key`'s preset that a job reads.

    preset_slice("wsi", "reader", "tissue") is {"reader": preset("wsi", "reader"), "tissue": ...}; a
    keyword names a deeper value: preset_slice("rlqgrad", "model", n_layers=("variance", "n_layers")).
    Keys keep the order given (names, then keywords), so the value (which Snakemake hashes into each
    job's params) is the dict written out by hand. Rules call it in `lambda wc:` to read it per job.
    """
    return {**{name: preset(key, name) for name in names}, **{name: preset(key, *path) for name, path in paths.items()}}


# The resources of a small job (aggregates, figures, tables): `resources: **SMALL_JOB,`.
SMALL_JOB = {"mem_mb": 1000, "runtime": 5}


def logs(step):
    """A rule's log, logs/<step>.log; `step` is "<key>/<step...>" with the rule's wildcards, e.g. "mcpo/fig1"."""
    return f"logs/{step}.log"


def bench(step):
    """A rule's benchmark, benchmarks/<step>.tsv, for the same `step` as its log."""
    return f"benchmarks/{step}.tsv"


def sidecar(path):
    """The checksum file `<path>.sha256` of a fetched or cached file or folder (repro.data.sidecar): an output of
    the rule that writes `path`, and an input, beside `path`, of every rule that reads it."""
    return str(sidecar_path(path))


def logs_of(*producers, files=None):
    """The logs of the jobs of `producers` (`rules.<name>`) that write `files`; all their logs without `files`.

    A figure, table or report takes, as the input `upstream_logs`, the log of every job whose output
    it reads. Snakemake removes the outputs of a failed job but keeps (and rewrites) its log, and it
    never reruns a job only because an input it read has gone; with the log as an input, a figure
    whose aggregate failed after it was built is older than that log, so the figure command alone
    reruns the aggregate and the figure instead of reporting "Nothing to be done" over a figure of
    the old aggregate. tests/workflow/test_layout_dag.py checks every job that writes under reports/.
    """
    if files is None:
        return [str(f) for producer in producers for f in producer.log]
    found = []
    for path in [files] if isinstance(files, str) else files:
        path = str(path)
        for producer, pattern in ((p, pattern) for p in producers for pattern in p.output):
            matched = glob_wildcards(pattern, files=[path])._asdict()
            values = {name: [got[0]] for name, got in matched.items() if got}
            if len(values) == len(matched) and expand(str(pattern), **values) == [path]:
                break
        else:
            names = ", ".join(p.rule.name for p in producers)
            raise ValueError(f"logs_of: {path} is not an output of {names}")
        for log in producer.log:
            concrete = expand(str(log), **values)[0]
            if concrete not in found:
                found.append(concrete)
    return found


def figure(key, name):
    """A figure of paper `key` in the HTML report: reports/<key>_<name>.pdf, captioned by
    workflow/report/<key>_<name>.rst (relative to the rule files), in the paper's category."""
    return report(f"reports/{key}_{name}.pdf", caption=f"../report/{key}_{name}.rst", category=key)


def partial_build():
    """Whether `--config partial=true` (or 1) asks the aggregates to read only what is built."""
    return str(config.get("partial", False)).lower() in ("true", "1")


def built(paths):
    """An aggregate's job files: all of `paths`, or under `--config partial=true` only those that exist.

    A partial aggregate builds no job; its script gets the `partial` flag, records the runs it did not
    find in the metrics (`partial.missing_runs`), and the claims checker reports what needs them
    NOT RUN. The input list changes as jobs are built, so Snakemake reruns the aggregate then.
    """
    if not partial_build():
        return list(paths)
    return [p for p in paths if Path(p).exists()]


def validate_block(key):
    """Check all three presets of block `key` against workflow/schemas/<key>.schema.yaml (filling defaults).

    An error names the full path of the offending key, e.g. `tmevolve.small.model.dropuot`.
    """
    schema = REPO / f"workflow/schemas/{key}.schema.yaml"
    for scale in SCALES:
        try:
            validate(config[key][scale], str(schema))
        except Exception:
            raise ValueError(f"config: {preset_error(config[key][scale], schema, f'{key}.{scale}')}") from None


def rule_files():
    """Files of rules to include, in papers.yaml order: each shared stage, then each paper that has one."""
    files = [f"workflow/rules/{key}.smk" for key in BLOCKS if (REPO / f"workflow/rules/{key}.smk").exists()]
    return files + ["workflow/rules/aereport.smk"]


def source_of(key, sources=("synthetic",), why=None):
    """Block `key`'s data source, refused with a clear error when the block cannot read it (`why`: what
    the error says instead of the sources the block reads)."""
    source = config.get(key, {}).get("source", "synthetic")
    if source not in sources:
        why = why or f"{key} reads only: {', '.join(sources)}"
        raise ValueError(f"config: {key}.source is {source!r}, but {why}")
    return source


def register_targets(key, targets, sources=("synthetic",)):
    """Record paper `key`'s final targets (figures, tables, metrics); `sources` it can read data from."""
    if key in config:
        validate_block(key)
        source_of(key, sources)
    PAPER_TARGETS[key] = list(targets)


def all_targets():
    return [t for targets in PAPER_TARGETS.values() for t in targets] + [
        "reports/artifact_evaluation.md",
        "reports/artifact_evaluation.html",
    ]
