"""The paper-scale canary: every job type of a paper's ``paper`` preset, for a few steps, on this machine.

A paper preset is written for a GPU or a cluster, and nothing at ``smoke`` or ``small`` runs its shapes,
models or code paths. A preset that would crash on a cluster after an hour in the queue (a shape error,
a model that does not fit, a missing key) should crash here, in minutes. The canary runs each paper's
DAG at ``scale=paper`` with step counts capped and everything else (widths, batch sizes, models, data
layout) as the preset has it, and measures what each job type costs.

``workflow/canary/<key>.yaml`` holds one paper's canary (checked by ``workflow/schemas/canary.schema.yaml``)::

    cmcboot:
      caps: {n_replicates: 1, n_chunks: 1}   # merged over the paper preset: the paper's shapes, fewer steps
      smoke: {n_boot: 50}               # merged over that at canary=smoke: smoke-sized shapes too (CI)
      scale_up:                         # rule -> preset paths whose ratios (paper preset / canary) say how
        cmcboot_intervals: [n_replicates, /n_chunks]   # much more work the paper's job does ("/": divide)

``--config canary=true`` (with ``scale=paper``, which it implies) merges each paper's ``caps`` beneath the
values set in ``config.yaml``, ``--configfile`` and ``--config`` and above the presets
(``workflow/rules/common.smk``); ``canary=smoke`` adds ``smoke``. The outputs are results of capped
runs, not of the paper's settings, so the workflow refuses a canary in the checkout itself: it runs in a
folder of its own (``--directory``), which is what

    python -m repro.canary [--papers KEY ...] [--smoke] [--real] [--folder canary] [-- SNAKEMAKE_ARGS ...]

run in the checkout, does: paper by paper (``snakemake paper_<key>``), in ``canary/paper`` (``canary/smoke``
at ``--smoke``), measuring each run like :mod:`repro.timedbuild`. From the benchmark files of each job it proposes cluster resources (:mod:`repro.resources`): memory from the
measured peak (the shapes are the paper's, so the peak per step is), runtime from the measured time
scaled up by the rule's ``scale_up`` ratio. It writes there ``canary.json`` (per paper: exit status,
cost, the tail of a failure's log; per rule: measured and proposed resources), ``canary.md``
(the same as tables) and ``resources.yaml`` (a ``set-resources:`` block for a Snakemake
profile). At ``--smoke`` the shapes are not the paper's, so only the exit statuses mean anything and no
resources are proposed.

What the runtime proposal cannot see: work that does not scale with the capped steps (data generation,
evaluation at fixed size) is scaled with them, so the proposal errs long; a rule with no ``scale_up``
entry is proposed at its measured time (with headroom), which holds only for jobs the caps do not shorten.

``--real`` runs each real-data path instead: every block whose preset or schema reads data other than its
embedded default (``source: remote`` or ``local``, m2le's ``remote`` sequence, munkey's ``remote`` regime, the
WSI stage's manifest cohort; :data:`REAL_PATHS`) gets a small fixture in the format its loader reads
(:mod:`repro.data.fixtures`), served from a local HTTP server on 127.0.0.1 with its sha256 (or written where a
``local`` path reads it), and its paper's DAG runs through that path with the canary's caps, from an empty
folder, ``FOLDER/<paper|smoke>/real/<name>/`` (the fixture and the configuration that turns the path on,
``real.yaml``, are kept there). Its exit status and cost go into the same ``canary.json`` and ``canary.md``,
under ``real``; a run of one part keeps what the other part recorded. A fixture a loader refuses or a path that
crashes is a failure of the canary, with the tail of its log. rlqgrad's only source (``local``) is
scikit-learn's bundled data, which needs no fixture: its real-data run is its paper DAG again. The caps cut a
real file only where a preset key bounds what is read of it (toolgap's ``truthfulqa.limit``, mdadd's
``data.max_images``); evalmeta's local items file is read whole.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from repro.config import load_yaml_file, merge, schema_error
from repro.io import atomic_open, read_json, write_json
from repro.registry import Registry
from repro.resources import Proposal, collect, propose, to_markdown, to_set_resources

__all__ = ["MODES", "mode", "load_canaries", "overlay", "scale_up", "RealRun", "Fixture", "REAL_PATHS", "real_paths", "run_real", "record", "main"]

#: What ``config["canary"]`` may be, as typed on the command line or in YAML, and what each means.
MODES = {False: None, "false": None, True: "paper", "true": "paper", "smoke": "smoke"}


def mode(value: Any) -> str | None:
    """The canary mode asked for by ``config["canary"]``: None (off), ``"paper"`` or ``"smoke"``."""
    key = value.lower() if isinstance(value, str) else value
    if key not in MODES:
        raise ValueError(f"config.canary: {value!r} is not one of false, true, smoke")
    return MODES[key]


def load_canaries(folder: str | Path, keys: Sequence[str], schema: str | Path) -> dict[str, dict[str, Any]]:
    """Each paper's canary, ``{key: {"caps": ..., "smoke": ..., "scale_up": ...}}``, from ``folder/<key>.yaml``.

    A paper without a file has no canary (its ``paper`` preset would run whole); a file that names another
    paper, or does not match ``schema``, is an error naming it.
    """
    canaries = {}
    for key in keys:
        path = Path(folder) / f"{key}.yaml"
        if not path.is_file():
            continue
        doc = load_yaml_file(path)
        if not isinstance(doc, dict) or list(doc) != [key]:
            raise ValueError(f"{path}: a canary file holds exactly one block named after the file ({key}:)")
        error = schema_error(doc[key], schema, f"{path.name}:{key}")
        if error:
            raise ValueError(error)
        canaries[key] = {"caps": {}, "smoke": {}, "scale_up": {}, **doc[key]}
    return canaries


def overlay(canaries: Mapping[str, Mapping[str, Any]], which: str) -> dict[str, dict[str, Any]]:
    """The values the canary ``which`` (``"paper"`` or ``"smoke"``) sets: ``{key: {"paper": {...}}}``."""
    out = {}
    for key, canary in canaries.items():
        caps = merge({}, canary["caps"])
        if which == "smoke":
            merge(caps, canary["smoke"])
        out[key] = {"paper": caps}
    return out


def _at(node: Any, path: str, where: str) -> Any:
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise ValueError(f"{where}: no value at {path!r}")
        node = node[part]
    return node


def _size(value: Any, where: str) -> float:
    """A number, or a list's length (a list of seeds or of settings counts as its length)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, list)):
        raise ValueError(f"{where}: {value!r} is neither a number nor a list")
    return float(len(value)) if isinstance(value, list) else float(value)


def scale_up(preset: Mapping[str, Any], capped: Mapping[str, Any], paths: Sequence[str], where: str = "canary") -> float:
    """How much more work the paper preset's job does than the capped one: the product, over ``paths``, of
    the preset's value over the capped value (a list counts as its length); a path written ``/path`` divides
    instead (work per chunk: ``[n_replicates, /n_chunks]``)."""
    factor = 1.0
    for entry in paths:
        path = entry.lstrip("/")
        full, cut = _size(_at(preset, path, f"{where} (paper preset)"), where), _size(_at(capped, path, where), where)
        if full <= 0 or cut <= 0:
            raise ValueError(f"{where}: {path} is {full} in the preset and {cut} in the canary; a ratio needs positive values")
        factor *= cut / full if entry.startswith("/") else full / cut
    return factor


# ----------------------------------------------------------------------------------------------
# Real-data paths: per block, a fixture in the format its loader reads and the configuration that reads it
# ----------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class RealRun:
    """One real-data path as the canary runs it: what a user would write to turn it on, over a fixture."""

    block: str
    """the paper (or shared stage) whose path it is"""
    source: str
    """``remote`` (fetched over HTTP, checked by sha256) or ``local`` (a file or folder on this machine)"""
    reads: str
    """the fixture, in words (the format and its size)"""
    config: dict[str, Any]
    """the configuration file that turns the path on (merged over ``config.yaml`` and the caps)"""
    target: str = ""
    """the target built; default ``paper_<block>``"""


@dataclasses.dataclass(frozen=True)
class Fixture:
    """Where a real-data path's fixture goes, and at which size."""

    repo: Path
    """the checkout (the presets; the real slide shipped with the tests)"""
    served: Path
    """files served over HTTP at ``url``"""
    url: str
    work: Path
    """the build folder: a ``local`` path's files go under it, where the preset reads them"""
    smoke: bool
    """sized for the smoke canary, else for the paper preset's canary"""


#: name (the block's key, or ``<key>_<variant>`` for a block's second path) -> ``writer(Fixture) -> RealRun``:
#: writes the fixture and says how the path reads it.
REAL_PATHS: Registry[Callable[[Fixture], RealRun]] = Registry("real-data path")


def real_paths(blocks: Sequence[str] | None = None) -> list[str]:
    """The real-data paths of ``blocks`` (a paper's key or a stage's; default: every one), in registry order."""
    names = REAL_PATHS.names()
    if blocks is None:
        return names
    return [n for n in names if n in blocks or n.split("_")[0] in blocks]


#: Names a fixture must use as the papers' loaders accept them: driftbench's conditions and evalmeta's benchmark
#: columns. Written here because shared code imports no paper; a test checks them against the papers' own.
DRIFTBENCH_CONDITIONS = ("single_shot", "multi_turn_neutral", "multi_turn_pressure", "checkpointed_pressure")
EVALMETA_COLUMNS = ("agentharm", "strongreject", "triggers", "orbench_hard", "orbench_toxic", "misalignment")


@REAL_PATHS.register("collapse")
def _collapse(fx: Fixture) -> RealRun:
    from repro.data.fixtures import image_npz, sha256

    # the neural part's draw of n real images asks each digit for up to its weight's share plus five s.d.
    # (0.3 x 1,350 + 84 at the paper's n): 600 per digit covers it, 120 the smoke canary's n = 200
    npz = image_npz(fx.served / "digits.npz", [str(d) for d in range(5)], 120 if fx.smoke else 600, 28)
    return RealRun("collapse", "remote", f"an .npz of grey 28 x 28 images ({npz.stat().st_size // 1000} kB)",
                   {"collapse": {"source": "remote", "paper": {"neural": {"remote": {
                       "url": f"{fx.url}/{npz.name}", "sha256": sha256(npz), "image_size": 28}}}}})


@REAL_PATHS.register("driftbench")
def _driftbench(fx: Fixture) -> RealRun:
    from repro.data.fixtures import driftbench_release

    models, reps = ["openai/gpt-5.4", "anthropic/claude-sonnet-4-6"], 2 if fx.smoke else 4
    runs = [(f"{m:02d}{c:02d}{r:04d}", model, cond, r, (m + r) % 2 == 0, (c + r) % 5, r % 4 != 3)
            for m, model in enumerate(models) for c, cond in enumerate(DRIFTBENCH_CONDITIONS) for r in range(reps)]
    folder = driftbench_release(fx.work / "release", runs, DRIFTBENCH_CONDITIONS[0])
    return RealRun("driftbench", "remote", f"a released folder in the paper's layout ({len(runs)} runs)",
                   {"driftbench": {"source": "remote", "release_dir": str(folder)}})


@REAL_PATHS.register("evalmeta")
def _evalmeta(fx: Fixture) -> RealRun:
    from repro.data.fixtures import safety_items_jsonl

    per_column = 1 if fx.smoke else 2  # the canary's n_items, which a local file does not obey
    safety_items_jsonl(fx.work / "resources/evalmeta/items.jsonl", EVALMETA_COLUMNS, per_column,
                       variants={"triggers": ["real", "hypothetical"]})
    return RealRun("evalmeta", "local", f"a JSONL of {per_column} item(s) per benchmark column, both phrasings",
                   {"evalmeta": {"source": "local"}})


@REAL_PATHS.register("mdadd")
def _mdadd(fx: Fixture) -> RealRun:
    from repro.data.fixtures import caption_datasets_zip, flickr30k_ids, flickr30k_images_tar_gz, sha256

    # more training images than the largest set distilled (the canary's n_pairs: 20 at smoke, 500)
    images = flickr30k_ids(40, 20) if fx.smoke else flickr30k_ids(600, 100)
    archives = [caption_datasets_zip(fx.served, images), flickr30k_images_tar_gz(fx.served, images)]
    return RealRun("mdadd", "remote", f"Karpathy's caption_datasets.zip and a Flickr30K image archive ({len(images)} "
                   "images)", {"mdadd": {"source": "remote", "paper": {"data": {"archives": [
                       {"url": f"{fx.url}/{a.name}", "sha256": sha256(a)} for a in archives]}}}})


@REAL_PATHS.register("mdadd_local")
def _mdadd_local(fx: Fixture) -> RealRun:
    from repro.data.fixtures import flickr30k_folder, flickr30k_ids

    images = flickr30k_ids(40, 20) if fx.smoke else flickr30k_ids(600, 100)
    flickr30k_folder(fx.work / "resources/mdadd/flickr30k", images)
    return RealRun("mdadd", "local", f"Flickr30K unpacked: its Karpathy JSON and image folder ({len(images)} images)",
                   {"mdadd": {"source": "local"}})


@REAL_PATHS.register("modellens")
def _modellens(fx: Fixture) -> RealRun:
    from repro.data.fixtures import leaderboard_csv, sha256

    # a quarter of the models and datasets go unseen: 30 x 6 unseen groups, each past the largest K (10)
    dump = leaderboard_csv(fx.served / "leaderboard.csv", 120, 24)
    return RealRun("modellens", "remote", "a long-format leaderboard dump (120 models x 24 datasets)",
                   {"modellens": {"source": "remote", "remote": {"url": f"{fx.url}/{dump.name}", "sha256": sha256(dump)}}})


@REAL_PATHS.register("opinion")
def _opinion(fx: Fixture) -> RealRun:
    from repro.data.fixtures import edge_list_csv, sha256

    n = 40 if fx.smoke else 1000  # the size of the static networks the canary plays on
    edges = edge_list_csv(fx.served / "likes.csv", n)
    return RealRun("opinion", "remote", f"a weighted directed edge list of {n} accounts",
                   {"opinion": {"source": "remote", "paper": {"remote": {"url": f"{fx.url}/{edges.name}",
                                                                         "sha256": sha256(edges)}}}})


@REAL_PATHS.register("toolgap")
def _toolgap(fx: Fixture) -> RealRun:
    from repro.data.fixtures import truthfulqa_csv

    n = 40 if fx.smoke else 100  # more than the canary's truthfulqa.limit (16, 24), as the real file's 817 are
    truthfulqa_csv(fx.work / "resources/toolgap/TruthfulQA.csv", n)
    return RealRun("toolgap", "local", f"TruthfulQA.csv's columns, {n} questions", {"toolgap": {"source": "local"}})


def _image_set(served: Path, classes: int, per_class: int, size: int) -> Path:
    from repro.data.fixtures import image_folder, tar_gz

    folder = image_folder(served / "imageset", classes, per_class, size)
    archive = tar_gz(folder, served / "imageset.tar.gz")
    shutil.rmtree(folder)
    return archive


@REAL_PATHS.register("m2le")
def _m2le(fx: Fixture) -> RealRun:
    from repro.data.fixtures import sha256

    # the base task's 10 classes and n_tasks x classes_per_task more (the preset's example: 10 tasks of 5)
    n_tasks, per_task = (2, 2) if fx.smoke else (10, 5)
    archive = _image_set(fx.served, 10 + n_tasks * per_task, 10 if fx.smoke else 30, 16)
    remote = {"n_tasks": n_tasks, "classes_per_task": per_task, "image_size": 16, "url": f"{fx.url}/{archive.name}",
              "sha256": sha256(archive)}
    return RealRun("m2le", "remote", f"a class-per-folder image archive ({10 + n_tasks * per_task} classes)",
                   {"m2le": {"paper": {"sequences": {"remote": remote}}}})


@REAL_PATHS.register("munkey")
def _munkey(fx: Fixture) -> RealRun:
    from repro.config import workflow_config
    from repro.data.fixtures import sha256

    regimes = workflow_config(fx.repo)["munkey"]["paper"]["regimes"]
    per_class = 40 if fx.smoke else 520  # the remote regime subsamples n_images (300, 5,000) from 10 classes
    archive = _image_set(fx.served, 10, per_class, 20)
    return RealRun("munkey", "remote", f"a class-per-folder image archive (10 classes x {per_class})",
                   {"munkey": {"paper": {"regimes": [*regimes, "remote"], "remote": {
                       "url": f"{fx.url}/{archive.name}", "sha256": sha256(archive), "image_size": 16}}}})


@REAL_PATHS.register("rlqgrad")
def _rlqgrad(fx: Fixture) -> RealRun:
    return RealRun("rlqgrad", "local", "scikit-learn's bundled digits and breast cancer (no fixture: its only source)",
                   {})


@REAL_PATHS.register("wsi")
def _wsi(fx: Fixture) -> RealRun:
    from repro.data.fixtures import sha256, slide_manifest

    # the real Aperio slide shipped with the tests, once per row: tmevolve's control task splits the cohort into
    # folds (two at smoke, five) with both subtypes in each
    slide = fx.repo / "tests/data/wsi/cmu-1-small-region.svs"
    rows = []
    for k in range(8 if fx.smoke else 10):
        path = fx.served / f"cmu{k}.svs"
        try:
            os.link(slide, path)
        except OSError:
            shutil.copyfile(slide, path)
        rows.append((f"cmu{k}", f"{fx.url}/{path.name}", sha256(path)))
    manifest = slide_manifest(fx.work / "manifest.csv", rows)
    return RealRun("wsi", "remote", f"a manifest of {len(rows)} real Aperio slides (CMU-1-Small-Region), read as "
                   "tmevolve's control cohort", {"wsi": {"paper": {"remote": {"cohort": "cmu", "manifest": str(manifest)}}},
                                                  "tmevolve": {"paper": {"control_cohort": "cmu"}}},
                   target="paper_tmevolve")


# ----------------------------------------------------------------------------------------------
# The runner
# ----------------------------------------------------------------------------------------------

def _tail(path: Path, lines: int = 25) -> str:
    text = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []
    return "\n".join(text[-lines:])


def _plan(folder: Path, canaries: Mapping[str, Mapping[str, Any]], presets: Mapping[str, Any],
          capped: Mapping[str, Any]) -> dict[str, Proposal]:
    """Per rule that ran in ``folder``: resources proposed from its benchmark files, runtime scaled up by the
    ratios its block's canary names (a shared stage's rules by the stage's canary)."""
    factors = {rule: scale_up(presets[key]["paper"], capped[key]["paper"], paths, f"{key} canary, scale_up.{rule}")
               for key, canary in canaries.items() for rule, paths in canary["scale_up"].items()}
    root = folder / "benchmarks"
    return propose(collect(root), scale_up=factors) if root.is_dir() else {}


def _table(results: Mapping[str, Any], first: str) -> list[str]:
    lines = [f"| {first} | exit | jobs | CPU-s | wall s | peak RSS MB |", "|---|---|---|---|---|---|"]
    for key, r in results.items():
        lines.append(f"| {key} | {r['exit']} | {r['jobs']} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['peak_rss_mb']:.0f} |")
    return lines


def _markdown(report: Mapping[str, Any]) -> str:
    """``canary.md``: the synthetic part (per paper, and per rule the resources proposed), then the real-data part."""
    which, results, real = report["mode"], report["papers"], report["real"]
    plan = {rule: Proposal(**p) for rule, p in report["rules"].items()}
    lines = [f"# Paper-scale canary ({'smoke-sized shapes' if which == 'smoke' else 'the paper shapes'})", ""]
    lines += _table(results, "paper") if results else ["The synthetic paths have not run in this folder."]
    if plan:
        lines += ["", "Resources per rule (runtime: the measured time x the rule's scale-up x 2; memory: the measured",
                  "peak x 1.5, the shapes being the paper's):", "", to_markdown(plan).rstrip()]
    lines += ["", "## Real-data paths", ""]
    if real:
        lines += ["Each path read a fixture in its loader's format (served from 127.0.0.1 with its sha256, or a",
                  "local file), through its paper's DAG with the canary's caps, from an empty folder.", ""]
        lines += _table(real, "path")
        lines += ["", "| path | block | source | fixture |", "|---|---|---|---|"]
        lines += [f"| {name} | {r['block']} | {r['source']} | {r['reads']} |" for name, r in real.items()]
    else:
        lines += ["Not run in this folder (python -m repro.canary --real)."]
    for title, part in (("", results), ("real-data path ", real)):
        for key, r in part.items():
            if r["exit"] != 0:
                lines += ["", f"## {title}{key} failed", "", "```", r.get("log_tail", ""), "```"]
    return "\n".join(lines) + "\n"


def _snakemake(repo: Path, work: Path, cores: int, extra: Sequence[str], which: str, target: str,
               configfiles: Sequence[Path] = ()) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "--directory", str(work),
            "--configfile", str(repo / "config.yaml"), *map(str, configfiles), "--cores", str(cores), *extra,
            "--config", "scale=paper", f"canary={'smoke' if which == 'smoke' else 'true'}", "--", target]


def _measure(cmd: list[str], log: Path, target: str) -> dict[str, Any]:
    """Run one canary build: its exit status, jobs and cost (and the tail of its log when it failed)."""
    from repro.timedbuild import FINISHED, run_measured

    rc, used = run_measured(cmd, log)
    text = log.read_text(encoding="utf-8", errors="replace")
    entry = {"exit": rc, "jobs": len([r for r in FINISHED.findall(text) if r != target]),
             **{k: round(v, 1) for k, v in used.items()}}
    if rc != 0:
        entry["log_tail"] = _tail(log)
    return entry


def run_real(name: str, repo: Path, folder: Path, which: str, cores: int, extra: Sequence[str]) -> dict[str, Any]:
    """Run the real-data path ``name`` in ``folder/real/<name>/`` from empty: write its fixture, serve it, build."""
    from repro.data.fixtures import serve_folder

    work = folder / "real" / name
    if work.exists():
        shutil.rmtree(work)
    served = work / "served"
    served.mkdir(parents=True)
    with serve_folder(served) as url:
        start = time.monotonic()
        run = REAL_PATHS.get(name)(Fixture(repo, served, url, work, which == "smoke"))
        written = time.monotonic() - start
        overlay = work / "real.yaml"
        overlay.write_text(yaml.safe_dump(run.config, sort_keys=False), encoding="utf-8")
        target = run.target or f"paper_{run.block}"
        entry = _measure(_snakemake(repo, work, cores, extra, which, target, [overlay]),
                         work / "logs/canary" / f"{name}.log", target)
    return {"block": run.block, "source": run.source, "reads": run.reads, "target": target,
            "fixture_s": round(written, 1), **entry}


def record(folder: Path, which: str, **parts: Mapping[str, Any]) -> dict[str, Any]:
    """Write ``folder/canary.json`` and ``canary.md`` with ``parts`` (``papers`` and ``rules``: the synthetic paths;
    ``real``: the real-data paths) in place of what an earlier run recorded there, the other parts kept."""
    path = folder / "canary.json"
    report = {"mode": which, "papers": {}, "rules": {}, "real": {}}
    if path.is_file():
        report.update({k: v for k, v in read_json(path).items() if k in report and k != "mode"})
    report.update(parts)
    write_json(path, report)
    with atomic_open(folder / "canary.md") as fh:
        fh.write(_markdown(report))
    return report


def main(argv: list[str] | None = None) -> int:
    from repro.config import workflow_config
    from repro.timedbuild import on_sigterm, split_passthrough

    argv, extra = split_passthrough(argv)
    parser = argparse.ArgumentParser(prog="python -m repro.canary", description=__doc__.splitlines()[0])
    parser.add_argument("--papers", nargs="+", help="these papers (default: every paper with a canary file; with "
                        "--real, every block with a real-data path, the wsi stage included)")
    parser.add_argument("--smoke", action="store_true", help="smoke-sized shapes as well (what CI runs)")
    parser.add_argument("--real", action="store_true", help="the real-data paths, each over a fixture in its format")
    parser.add_argument("--folder", type=Path, default=Path("canary"),
                        help="the canary builds in FOLDER/paper or FOLDER/smoke (default: canary/)")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args(argv)
    repo = Path.cwd()
    if not (repo / "Snakefile").is_file() or not (repo / "workflow/canary").is_dir():
        parser.error(f"run it in the workflow's checkout (no Snakefile and workflow/canary/ in {repo})")
    listed = yaml.safe_load((repo / "workflow/papers.yaml").read_text())
    papers = [p["key"] for p in listed["papers"]]
    canaries = load_canaries(repo / "workflow/canary", [*listed["stages"], *papers], repo / "workflow/schemas/canary.schema.yaml")
    if args.real:
        known = sorted({n.split("_")[0] for n in REAL_PATHS.names()})
        unknown = sorted(k for k in args.papers or [] if k not in known)
        if unknown:
            parser.error(f"no real-data path for: {', '.join(unknown)} (the canary has one for {', '.join(known)}; "
                         "docs/papers/<key>.md, Real data, says why the others have none)")
    else:
        unknown = sorted(k for k in args.papers or [] if k not in papers or k not in canaries)
        if unknown:
            parser.error(f"no canary for: {', '.join(unknown)} (workflow/canary/ has {', '.join(canaries)})")
    which = "smoke" if args.smoke else "paper"
    folder = (args.folder / which).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, on_sigterm)  # a stopped canary stops its snakemake and still reports
    if args.real:
        results = {}
        for name in real_paths(args.papers):
            print(f"{name}: real-data canary ({which}) ...", flush=True)
            results[name] = entry = run_real(name, repo, folder, which, args.cores, extra)
            print(f"{name}: exit {entry['exit']}, {entry['jobs']} jobs, {entry['cpu_s']} CPU-s", flush=True)
        record(folder, which, real=results)
    else:
        presets = workflow_config(repo)
        capped = workflow_config(repo, overlay(canaries, which))
        results = {}
        for key in args.papers or [k for k in papers if k in canaries]:
            print(f"{key}: canary ({which}) ...", flush=True)
            target = f"paper_{key}"
            results[key] = entry = _measure(_snakemake(repo, folder, args.cores, extra, which, target),
                                            folder / "logs/canary" / f"{key}.log", target)
            print(f"{key}: exit {entry['exit']}, {entry['jobs']} jobs, {entry['cpu_s']} CPU-s, peak {entry['peak_rss_mb']} MB",
                  flush=True)
        plan = _plan(folder, canaries, presets, capped) if which == "paper" else {}
        record(folder, which, papers=results, rules={rule: dataclasses.asdict(p) for rule, p in plan.items()})
        if plan:
            with atomic_open(folder / "resources.yaml") as fh:
                fh.write(to_set_resources(plan))
    failed = [k for k, r in results.items() if r["exit"] != 0]
    part = "real-data paths" if args.real else "papers"
    print(f"canary: {len(results) - len(failed)} of {len(results)} {part} ran"
          + (f"; failed: {', '.join(failed)} (see {folder / 'canary.md'})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
