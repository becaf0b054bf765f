"""Build the default report paper by paper, measuring what each paper costs.

``python -m repro.timedbuild [--papers KEY ...] [-- SNAKEMAKE_ARGS ...]``, run in a build folder (a clean
clone), runs ``snakemake paper_<key>`` for each paper in turn and then ``snakemake
reports/artifact_evaluation.md``. Per paper it records in ``costs.json`` (the file
:mod:`repro.publish` reads):

- ``cpu_s``: user + system seconds of snakemake and of every process it started, as the kernel
  accounts a waited-for child (:func:`os.wait4`), so a job's own subprocesses count;
- ``wall_s``; ``peak_rss_mb``: the largest resident set of any one of those processes (Linux counts into
  a process's peak the memory of the process that spawned it, up to its ``exec``, so this bounds it from
  above by at most Snakemake's own few hundred MB);
- ``jobs``: the jobs snakemake finished (the paper's target rule not counted);
- ``sittings``: how many runs the paper took. A sitting that is interrupted (Ctrl-C, SIGTERM) still adds
  what it spent, and the next run of this command resumes the paper where Snakemake left it; a paper is
  ``complete`` once its target rule succeeded. A sitting is recorded before it starts (``running``), so one
  killed outright (SIGKILL, a lost machine) is counted in ``lost_sittings`` by the next run: its jobs' work
  is kept, its cost is not measured, and ``cpu_s`` is then a lower bound;
- ``commit`` and ``fingerprint``: the commit the paper was completed at and the hashes of the files
  its verdicts depend on (:func:`repro.staleness.fingerprint`); while it is not complete,
  ``fingerprint_started``, those hashes when its first sitting began.

The build folder may move to a later commit between sittings (``git pull``): a complete paper whose
fingerprint is unchanged is skipped, its verdicts being those the later commit would give; one whose
inputs changed (since it was completed, or since an unfinished paper's first sitting) is rebuilt from
nothing: its outputs (``results/<key>``, ``resources/<key>``,
``benchmarks/<key>``, ``reports/<key>_*``, and a changed shared stage's) are removed first, since
Snakemake does not see a change in an imported module, and removing them (unlike forcing rules)
keeps an interrupted rebuild resumable. :mod:`repro.publish` refuses a build in which a paper's
recorded fingerprint differs from the published commit's, so a report built over several commits
is still the report of one commit.

Outputs of a paper with no record in ``costs.json`` (made by a plain ``snakemake`` run, or by a sitting
killed before this tool recorded sittings) are removed before its first sitting: nothing says what code
made them, and a cost is measured from empty.

A job shared by several papers (the WSI stage, the language-model cache) is counted with the first
paper that needs it. Each sitting's output goes to ``logs/timedbuild/<key>.<n>.log``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from repro.io import read_json, write_json
from repro.provenance import git_commit
from repro.staleness import fingerprint, stage_inputs, stale

__all__ = ["Interrupted", "on_sigterm", "touched_stages", "build_paper", "run_measured", "split_passthrough", "main"]

FINISHED = re.compile(r"^Finished jobid: \d+ \(Rule: (\w+)\)", re.M)


class Interrupted(Exception):
    """SIGTERM, raised where the build waits so that the sitting's cost is still recorded."""


def on_sigterm(signum, frame):
    raise Interrupted


def clear_outputs(folder: Path, names: list[str]) -> list[str]:
    """Remove what the blocks ``names`` (a paper or a shared stage) built in ``folder``; the paths removed."""
    removed = []
    for name in names:
        paths = [folder / d / name for d in ("results", "resources", "benchmarks")]
        paths += sorted((folder / "reports").glob(f"{name}_*"))
        for path in paths:
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
            else:
                continue
            removed.append(str(path.relative_to(folder)))
    return removed


def run_measured(cmd: list[str], log: Path) -> tuple[int, dict[str, float]]:
    """Run ``cmd`` with its output in ``log``; its exit status and measured cost."""
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        stopping = False
        while True:
            try:
                _, status, usage = os.wait4(proc.pid, 0)
                break
            except (KeyboardInterrupt, Interrupted):
                # snakemake stops its jobs and marks them incomplete; a repeated signal is passed on to it
                # and the wait goes on, so that what the sitting spent is still recorded
                stopping = True
                proc.terminate()
        if stopping:
            status = 130 << 8
    proc.returncode = os.waitstatus_to_exitcode(status)
    scale = 1024 if sys.platform != "darwin" else 1  # ru_maxrss: KiB on Linux, bytes on macOS
    return proc.returncode, {"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": time.monotonic() - start,
                             "peak_rss_mb": usage.ru_maxrss * scale / 2**20}


def changed_inputs(key: str, folder: Path, entry: dict[str, Any]) -> list[str]:
    """What changed in ``key``'s inputs since it was completed, or, for a paper not yet complete, since its
    first sitting began (its jobs so far ran that code); empty if nothing, or if nothing was recorded."""
    recorded = entry.get("fingerprint") if entry.get("complete") else entry.get("fingerprint_started")
    if recorded is None:
        return []
    return stale({key: recorded}, folder).get(key, [])


def touched_stages(changed: list[str], stages: list[str], folder: Path) -> list[str]:
    """The shared stages among ``stages`` whose outputs a change (``changed``: :func:`repro.staleness.stale`'s
    "changed <path>" lines) makes stale: those with a changed file among :func:`repro.staleness.stage_inputs`."""
    paths = {line.split(" ", 1)[1] for line in changed}
    return [s for s in stages if paths & set(stage_inputs(s, folder))]


def _new_entry() -> dict[str, Any]:
    """A paper's costs before its first sitting."""
    return {"cpu_s": 0.0, "wall_s": 0.0, "peak_rss_mb": 0.0, "jobs": 0, "sittings": 0, "complete": False}


def build_paper(key: str, folder: Path, costs: dict[str, Any], snakemake_args: list[str],
                costs_file: Path | None = None) -> int:
    """One sitting of ``snakemake paper_<key>`` in ``folder``, added to ``costs[key]``.

    The sitting is written to ``costs_file`` before it starts (``running``: when), so that a sitting killed
    with no chance to record itself (SIGKILL, a machine that goes away) still leaves the fingerprint its
    jobs ran with, and the next run counts it in ``lost_sittings``: its cost is not in ``cpu_s``, which is
    then a lower bound.
    """
    entry = costs.setdefault(key, _new_entry())
    if entry.pop("running", None) is not None:
        entry["lost_sittings"] = entry.get("lost_sittings", 0) + 1
    entry.setdefault("fingerprint_started", fingerprint(key, folder))
    entry["running"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if costs_file is not None:
        write_json(costs_file, costs)
    log = folder / "logs/timedbuild" / f"{key}.{entry['sittings'] + entry.get('lost_sittings', 0) + 1}.log"
    cmd = [sys.executable, "-m", "snakemake", f"paper_{key}", *snakemake_args]
    rc, used = run_measured(cmd, log)
    jobs = [r for r in FINISHED.findall(log.read_text(encoding="utf-8", errors="replace")) if r != f"paper_{key}"]
    entry.pop("running")
    entry.update(cpu_s=round(entry["cpu_s"] + used["cpu_s"], 1), wall_s=round(entry["wall_s"] + used["wall_s"], 1),
                 peak_rss_mb=round(max(entry["peak_rss_mb"], used["peak_rss_mb"]), 1),
                 jobs=entry["jobs"] + len(jobs), sittings=entry["sittings"] + 1, complete=rc == 0,
                 source="repro.timedbuild: os.wait4 of snakemake (user + system of it and its jobs)")
    if rc == 0:
        entry.update(commit=git_commit(folder)["commit"], fingerprint=fingerprint(key, folder))
        entry.pop("fingerprint_started", None)
    return rc


def split_passthrough(argv: list[str] | None) -> tuple[list[str], list[str]]:
    """``argv`` (default: the command line) split at ``--``: this tool's arguments, and snakemake's."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        return argv, []
    return argv[: argv.index("--")], argv[argv.index("--") + 1:]


def main(argv: list[str] | None = None) -> int:
    argv, extra = split_passthrough(argv)
    parser = argparse.ArgumentParser(prog="python -m repro.timedbuild", description=__doc__.splitlines()[0])
    parser.add_argument("--papers", nargs="+", help="these papers first, in this order (default: workflow/papers.yaml's)")
    parser.add_argument("--only", action="store_true", help="build only --papers, not the others nor the report")
    args = parser.parse_args(argv)
    folder = Path.cwd()
    papers_yaml = yaml.safe_load((folder / "workflow/papers.yaml").read_text())
    listed = [p["key"] for p in papers_yaml["papers"]]
    unknown = sorted(set(args.papers or []) - set(listed))
    if unknown:
        parser.error(f"not paper keys: {', '.join(unknown)} (workflow/papers.yaml lists {', '.join(listed)})")
    order = list(args.papers or []) + ([] if args.only else [k for k in listed if k not in (args.papers or [])])
    costs_file = folder / "costs.json"
    costs = read_json(costs_file) if costs_file.is_file() else {}
    signal.signal(signal.SIGTERM, on_sigterm)
    stages = papers_yaml.get("stages", [])
    for key in order:
        changed = changed_inputs(key, folder, costs.get(key, {}))
        if changed:
            touched = touched_stages(changed, stages, folder)
            removed = clear_outputs(folder, [key, *touched])
            print(f"{key}: inputs changed since it was built ({', '.join(changed[:5])}"
                  f"{' ...' if len(changed) > 5 else ''}): removed {', '.join(removed)}; rebuilding", flush=True)
            previous = costs.pop(key)
            costs[key] = _new_entry() | {"superseded": previous.get("superseded", []) + [
                {k: previous.get(k) for k in ("commit", "cpu_s", "wall_s", "jobs", "sittings", "lost_sittings")}]}
            write_json(costs_file, costs)
        elif costs.get(key, {}).get("complete"):
            print(f"{key}: complete, skipped ({costs[key]['cpu_s']} CPU-s in {costs[key]['sittings']} sittings)")
            continue
        elif key not in costs:
            removed = clear_outputs(folder, [key])
            if removed:  # made by no recorded sitting: of unknown code, and a cost is measured from empty
                print(f"{key}: outputs that no recorded sitting made removed ({', '.join(removed)})", flush=True)
        print(f"{key}: building ...", flush=True)
        rc = build_paper(key, folder, costs, extra, costs_file)
        write_json(costs_file, costs)
        c = costs[key]
        print(f"{key}: exit {rc}, {c['jobs']} jobs, {c['cpu_s']} CPU-s, {c['wall_s']} s wall, "
              f"peak {c['peak_rss_mb']} MB", flush=True)
        if rc != 0:
            return rc
    if args.only:
        return 0
    rc, used = run_measured([sys.executable, "-m", "snakemake", "reports/artifact_evaluation.md", *extra],
                             folder / "logs/timedbuild/report.log")
    print(f"report: exit {rc}, {used['cpu_s']:.1f} CPU-s")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
