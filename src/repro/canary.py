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

    python -m repro.canary [--papers KEY ...] [--smoke] [--folder canary] [-- SNAKEMAKE_ARGS ...]

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
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from repro.config import load_yaml_file, merge, schema_error
from repro.io import atomic_open, write_json
from repro.resources import Proposal, collect, propose, to_markdown, to_set_resources

__all__ = ["MODES", "mode", "load_canaries", "overlay", "scale_up", "main"]

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


def _markdown(results: Mapping[str, Any], which: str, plan: Mapping[str, Proposal]) -> str:
    lines = [f"# Paper-scale canary ({'smoke-sized shapes' if which == 'smoke' else 'the paper shapes'})", "",
             "| paper | exit | jobs | CPU-s | wall s | peak RSS MB |", "|---|---|---|---|---|---|"]
    for key, r in results.items():
        lines.append(f"| {key} | {r['exit']} | {r['jobs']} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['peak_rss_mb']:.0f} |")
    if plan:
        lines += ["", "Resources per rule (runtime: the measured time x the rule's scale-up x 2; memory: the measured",
                  "peak x 1.5, the shapes being the paper's):", "", to_markdown(plan).rstrip()]
    for key, r in results.items():
        if r["exit"] != 0:
            lines += ["", f"## {key} failed", "", "```", r["log_tail"], "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from repro.config import workflow_config
    from repro.timedbuild import FINISHED, on_sigterm, run_measured, split_passthrough

    argv, extra = split_passthrough(argv)
    parser = argparse.ArgumentParser(prog="python -m repro.canary", description=__doc__.splitlines()[0])
    parser.add_argument("--papers", nargs="+", help="these papers (default: every paper with a canary file)")
    parser.add_argument("--smoke", action="store_true", help="smoke-sized shapes as well (what CI runs)")
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
    unknown = sorted(k for k in args.papers or [] if k not in papers or k not in canaries)
    if unknown:
        parser.error(f"no canary for: {', '.join(unknown)} (workflow/canary/ has {', '.join(canaries)})")
    which = "smoke" if args.smoke else "paper"
    folder = (args.folder / which).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, on_sigterm)  # a stopped canary stops its snakemake and still reports
    presets = workflow_config(repo)
    capped = workflow_config(repo, overlay(canaries, which))
    results: dict[str, Any] = {}
    for key in args.papers or [k for k in papers if k in canaries]:
        log = folder / "logs/canary" / f"{key}.log"
        cmd = [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "--directory", str(folder),
               "--configfile", str(repo / "config.yaml"), "--cores", str(args.cores), *extra,
               "--config", "scale=paper", f"canary={'smoke' if args.smoke else 'true'}", "--", f"paper_{key}"]
        print(f"{key}: canary ({which}) ...", flush=True)
        rc, used = run_measured(cmd, log)
        text = log.read_text(encoding="utf-8", errors="replace")
        entry = {"exit": rc, "jobs": len([r for r in FINISHED.findall(text) if r != f"paper_{key}"]),
                 **{k: round(v, 1) for k, v in used.items()}}
        if rc != 0:
            entry["log_tail"] = _tail(log)
        results[key] = entry
        print(f"{key}: exit {rc}, {entry['jobs']} jobs, {entry['cpu_s']} CPU-s, peak {entry['peak_rss_mb']} MB", flush=True)
    plan = _plan(folder, canaries, presets, capped) if which == "paper" else {}
    write_json(folder / "canary.json", {"mode": which, "papers": results,
                                         "rules": {rule: dataclasses.asdict(p) for rule, p in plan.items()}})
    with atomic_open(folder / "canary.md") as fh:
        fh.write(_markdown(results, which, plan))
    if plan:
        with atomic_open(folder / "resources.yaml") as fh:
            fh.write(to_set_resources(plan))
    failed = [k for k, r in results.items() if r["exit"] != 0]
    print(f"canary: {len(results) - len(failed)} of {len(results)} papers ran"
          + (f"; failed: {', '.join(failed)} (see {folder / 'canary.md'})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
