"""Publish a built artifact-evaluation report into the repository, and say when it has gone stale.

``python -m repro.publish BUILD_DIR`` copies a finished build's report (``BUILD_DIR/reports/
artifact_evaluation.{md,html}``) into ``docs/results/`` with a record of what it is:

- ``build.json``: the commit it was built from (refused if the tree was dirty), the date, the machine
  (CPU model, cores, memory), the scale, and per paper its claim ids and verdicts, its cost (jobs, CPU
  seconds, wall seconds and peak RSS from the benchmark files, plus any measured ``costs.json`` in the
  build folder, which a ``time`` wrapper writes) and the fingerprint of the files its verdicts depend
  on (:func:`repro.staleness.fingerprint`);
- ``README.md``: the page a reader opens, which says at its top whether each paper's verdicts are
  still current (:func:`banner`), then the build's facts and a table of papers;
- the report itself (the HTML only while it is under :data:`MAX_HTML_BYTES`).

Where ``costs.json`` records the fingerprint each paper was built from (:mod:`repro.timedbuild` does,
and may build over several commits), a paper whose fingerprint differs from the published commit's
is refused: every verdict published is the one its commit gives.

``python -m repro.claims --stale`` names the papers whose inputs changed since; ``--mark`` rewrites
the page's banner to say so (:mod:`repro.staleness`; a test checks that the banner is what ``--stale`` finds).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from repro.aereport import PaperEntry, _verdicts_text, collect, kind_counts, load_papers
from repro.claims import KINDS
from repro.io import atomic_open, atomic_path, read_json, write_json
from repro.provenance import git_commit
from repro.resources import collect as benchmark_rows
from repro.staleness import banner, fingerprint, stale

__all__ = ["publish", "MAX_HTML_BYTES"]

MAX_HTML_BYTES = 8_000_000


def _machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal"))
    except (OSError, StopIteration, ValueError):
        mem_kb = None
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 2**20, 1) if mem_kb else None,
            "system": f"{platform.system()} {platform.release()}", "python": platform.python_version()}


def _costs(entry: PaperEntry, benchmarks: Path) -> dict[str, Any]:
    """Jobs, CPU-s and wall s as :func:`repro.aereport.collect` summed them, with the peak RSS of any job."""
    folder = benchmarks / entry.key
    rss = [r.max_rss_mb for r in (benchmark_rows(folder) if folder.is_dir() else []) if r.max_rss_mb is not None]
    return {"jobs": entry.n_jobs, "cpu_s": round(entry.cpu_s or 0.0, 1), "wall_s": round(entry.runtime_s or 0.0, 1),
            "peak_rss_mb": round(max(rss), 1) if rss else None,
            "source": "Snakemake benchmark files (sum over jobs; peak of any job)"}


def _page(build: Mapping[str, Any], repo: Path, has_html: bool) -> str:
    m = build["machine"]
    out = ["# Published artifact-evaluation report", "", banner(build, repo), "",
           f"Built with `snakemake reports/artifact_evaluation.md` at scale `{build['scale']}` from one clean "
           f"clone at commit `{build['commit']}`, finished {build['date']}, on {m['cpu']} ({m['cores']} cores, "
           f"{m['memory_gb']} GB, {m['system']}).", "",
           "The report: [artifact_evaluation.md](artifact_evaluation.md)"
           + (" and [artifact_evaluation.html](artifact_evaluation.html) (figures inline)." if has_html else "."), "",
           "Costs: jobs, CPU-s and wall s summed over the jobs' benchmark files, the peak RSS of any job, and the "
           "CPU-s of the whole build of the paper as the kernel counts it (snakemake and every process it started, "
           "`repro.timedbuild`), with the sittings it took; a sitting lost without a record makes that a lower bound.",
           "",
           "| paper | verdicts (reproduction / substitute / code check) | jobs | CPU-s (jobs) | wall s (jobs) "
           "| peak RSS MB | CPU-s (build, sittings) |",
           "|---|---|---|---|---|---|---|"]
    for key, p in build["papers"].items():
        c, v = p["cost"], p["counts"]
        out.append(f"| {key} | {v} | {c['jobs']} | {c['cpu_s']} | {c['wall_s']} | "
                   f"{c['peak_rss_mb'] if c['peak_rss_mb'] is not None else '-'} | {_measured_text(c.get('measured'))} |")
    t = build["total"]
    out += [f"| **total** | | {t['jobs']} | {t['cpu_s']} | {t['wall_s']} | | |", ""]
    return "\n".join(out)


def _measured_text(measured: Mapping[str, Any] | None) -> str:
    """A paper's measured build cost as the page prints it: CPU-s (sittings[, lost: at least])."""
    if not measured:
        return "-"
    lost = measured.get("lost_sittings", 0)
    sittings = f"{measured.get('sittings', 0)} sitting{'s' if measured.get('sittings', 0) != 1 else ''}"
    if lost:
        return f"at least {measured['cpu_s']} ({sittings}, {lost} lost unmeasured)"
    return f"{measured['cpu_s']} ({sittings})"


def _counts_text(results) -> str:
    counts = kind_counts(results)
    return " / ".join(_verdicts_text(counts[kind]) for kind in KINDS)


def publish(build_dir: str | Path, to: str | Path = "docs/results", repo: str | Path = ".", *,
            allow_dirty: bool = False) -> dict[str, Any]:
    """Copy ``build_dir``'s report into ``to`` with its ``build.json`` and page; returns the build record."""
    build_dir, to, repo = Path(build_dir), Path(to), Path(repo).resolve()
    report = build_dir / "reports/artifact_evaluation.md"
    if not report.is_file():
        raise FileNotFoundError(f"{report}: build the report first (snakemake reports/artifact_evaluation.md)")
    head = git_commit(repo)
    if head["commit"] is None:
        raise ValueError(f"{repo}: not a git checkout; a published report must name its commit")
    if head["dirty"] and not allow_dirty:
        raise ValueError(f"{repo}: uncommitted changes; publish a build of a committed tree")
    papers = load_papers(repo / "workflow/papers.yaml")
    built = {p["key"]: [] for p in papers if (build_dir / "results" / p["key"] / "metrics.json").is_file()}
    entries = collect(papers, built=built, claims_dir=repo / "workflow/claims",
                      schema_path=repo / "workflow/schemas/claims.schema.yaml",
                      results_dir=build_dir / "results", benchmarks_dir=build_dir / "benchmarks")
    measured = read_json(build_dir / "costs.json") if (build_dir / "costs.json").is_file() else {}
    record: dict[str, Any] = {"commit": head["commit"], "dirty": head["dirty"],
                              "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                              "machine": _machine(), "scale": _scale(report), "papers": {}}
    for e in entries:
        if not e.built:
            continue
        now = fingerprint(e.key, repo)
        measured_cost = dict(measured.get(e.key, {}))
        built_from = measured_cost.pop("fingerprint", None)
        if built_from is not None and built_from != now:
            diffs = stale({e.key: built_from}, repo)[e.key]
            raise ValueError(f"{e.key} was built from other inputs than commit {head['commit'][:12]} has "
                             f"({', '.join(diffs[:4])}): rerun python -m repro.timedbuild in {build_dir}")
        cost = _costs(e, build_dir / "benchmarks") | ({"measured": measured_cost} if measured_cost else {})
        record["papers"][e.key] = {"claims": {r.claim.id: r.status for r in e.results},
                                   "counts": _counts_text(e.results), "cost": cost, "fingerprint": now}
    record["total"] = {k: round(sum(p["cost"][k] for p in record["papers"].values()), 1)
                       for k in ("jobs", "cpu_s", "wall_s")}
    to.mkdir(parents=True, exist_ok=True)
    _copy(report, to / "artifact_evaluation.md")
    html = build_dir / "reports/artifact_evaluation.html"
    has_html = html.is_file() and html.stat().st_size <= MAX_HTML_BYTES
    if has_html:
        _copy(html, to / "artifact_evaluation.html")
    write_json(to / "build.json", record)
    with atomic_open(to / "README.md", "w", encoding="utf-8") as fh:
        fh.write(_page(record, repo, has_html))
    return record


def _copy(source: Path, target: Path) -> None:
    with atomic_path(target) as tmp:  # nothing half-copied under the published name
        shutil.copyfile(source, tmp)


def _scale(report: Path) -> str:
    for line in report.read_text(encoding="utf-8").splitlines()[:30]:
        for scale in ("smoke", "small", "paper"):
            if f"`{scale}`" in line:
                return scale
    return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m repro.publish", description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", help="the folder the report was built in (holds reports/, results/, benchmarks/)")
    parser.add_argument("--to", default="docs/results", help="where to publish (default: docs/results)")
    parser.add_argument("--repo", default=".", help="repository root (default: the current folder)")
    args = parser.parse_args(argv)
    try:
        record = publish(args.build_dir, args.to, args.repo)
    except (OSError, ValueError) as err:
        print(f"publish: {err}")
        return 2
    print(f"published {len(record['papers'])} papers from commit {record['commit'][:12]} to {args.to}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
