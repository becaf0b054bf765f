"""Publish built papers into the repository, and the artifact-evaluation report assembled from them.

``python -m repro.publish BUILD_DIR [--papers KEY ...]`` adds the papers built in ``BUILD_DIR`` (a clean
clone where :mod:`repro.timedbuild` or ``snakemake`` ran) to ``docs/results/``; ``python -m repro.publish``
with no folder rewrites the report from what is published. A paper is published with the evidence its
verdicts and figures are read from, kept as the build laid it out under ``docs/results/evidence/``:

- ``results/<key>/metrics.json`` and every JSON file a diagnostic of its claims file reads;
- ``benchmarks/<key>/``: the Snakemake benchmark file of each of its jobs;
- ``reports/<key>_*``: its figures (PDF, the CSV of the plotted numbers, the caption) and tables.

``build.json`` records per paper the commit it was built at, when, on which machine (CPU model, cores,
memory), its scale, its claim ids and verdicts, its targets, its cost (jobs, CPU seconds, wall seconds
and peak RSS from the benchmark files, and the measured ``costs.json`` of :mod:`repro.timedbuild`: CPU-s
of snakemake and every process it started, sittings) and the fingerprint of the files its verdicts
depend on (:func:`repro.staleness.fingerprint`). The report (``artifact_evaluation.md``, and the HTML with
the figures as thumbnails while it is under :data:`MAX_HTML_BYTES`) is then written from the published
evidence of every paper by the code the workflow's report rule runs (:func:`repro.aereport.collect`,
:func:`repro.aereport.write_report`), so it is the report that one build of those papers would give.
``README.md`` is the page a reader opens: whether each paper's verdicts are still current
(:func:`repro.staleness.banner`), how it was built, and a table of papers with their costs.

Why paper by paper: the whole default build takes longer than one sitting on a laptop, and a build folder
need not outlive its machine, so each paper is published when it is complete, from a clean clone.
A paper is refused unless its build is complete (where ``costs.json`` says) and the fingerprint it was
built from is the fingerprint it has in this repository now: every verdict published is the one the
published commit's code gives. Nothing is written when a paper is refused, and a paper's evidence is
replaced whole (never half old, half new).

``python -m repro.claims --stale`` names the papers whose inputs changed since they were published;
``--mark`` rewrites the page's banner to say so (:mod:`repro.staleness`; a test checks that the banner
is what ``--stale`` finds).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from repro.aereport import PaperEntry, _verdicts_text, collect, kind_counts, load_papers, write_report
from repro.claims import KINDS, read_claim_file
from repro.io import atomic_open, read_json, write_json
from repro.provenance import git_commit
from repro.resources import collect as benchmark_rows
from repro.staleness import adopt_unchanged, banner, built_at, fingerprint, stale
from repro.timedbuild import clear_outputs

__all__ = ["publish", "assemble", "evidence_files", "MAX_HTML_BYTES", "EVIDENCE"]

MAX_HTML_BYTES = 8_000_000
#: Where a paper's evidence lies, under the published folder (laid out as in a build folder).
EVIDENCE = "evidence"
#: What a paper's report files may be (its figures, their CSVs and captions, its tables).
REPORT_SUFFIXES = (".pdf", ".csv", ".rst", ".md", ".tex")


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


def evidence_files(key: str, build_dir: str | Path, repo: str | Path = ".") -> list[str]:
    """The files of ``build_dir`` that ``key``'s verdicts, costs and figures are read from (relative paths)."""
    build_dir, repo = Path(build_dir), Path(repo)
    results = Path("results") / key
    files = {results / "metrics.json"}
    claim_file = repo / "workflow/claims" / f"{key}.yaml"
    if claim_file.is_file():
        doc = read_claim_file(claim_file, repo / "workflow/schemas/claims.schema.yaml")
        files |= {results / d.file for d in doc.diagnostics if (build_dir / results / d.file).is_file()}
    bench = build_dir / "benchmarks" / key
    files |= {p.relative_to(build_dir) for p in bench.rglob("*.tsv")} if bench.is_dir() else set()
    files |= {p.relative_to(build_dir) for p in (build_dir / "reports").glob(f"{key}_*")
              if p.is_file() and p.suffix in REPORT_SUFFIXES}
    return sorted(str(f) for f in files)


def _targets(key: str, evidence: Path) -> list[str]:
    """The paper's figures and tables as built (``reports/<key>_*.pdf`` and its Markdown tables)."""
    found = sorted(evidence.glob(f"reports/{key}_*"))
    return [f"reports/{p.name}" for p in found if p.suffix == ".pdf" or (p.suffix == ".md" and "table" in p.stem)]


def _costs(entry: PaperEntry, benchmarks: Path) -> dict[str, Any]:
    """Jobs, CPU-s and wall s as :func:`repro.aereport.collect` summed them, with the peak RSS of any job."""
    folder = benchmarks / entry.key
    rss = [r.max_rss_mb for r in (benchmark_rows(folder) if folder.is_dir() else []) if r.max_rss_mb is not None]
    return {"jobs": entry.n_jobs, "cpu_s": round(entry.cpu_s or 0.0, 1), "wall_s": round(entry.runtime_s or 0.0, 1),
            "peak_rss_mb": round(max(rss), 1) if rss else None,
            "source": "Snakemake benchmark files (sum over jobs; peak of any job)"}


def _scale(metrics: Path) -> str:
    """The scale the paper's metrics were made at (their provenance block)."""
    try:
        return (read_json(metrics).get("provenance") or {}).get("scale") or "unknown"
    except (OSError, ValueError):
        return "unknown"


def _page(build: Mapping[str, Any], repo: Path, papers: list[dict[str, Any]], has_html: bool) -> str:
    published = build["papers"]
    scales = sorted({p["scale"] for p in published.values()})
    out = ["# Published artifact-evaluation report", "", banner(build, repo), "",
           f"{len(published)} of {len(papers)} papers published, at scale {', '.join(f'`{s}`' for s in scales) or '-'}. "
           "Each paper was built whole from a clean clone of this repository (`python -m repro.timedbuild`, which runs "
           "`snakemake paper_<key>` from empty) at the commit its row names, and published with the evidence its "
           "verdicts are read from (`evidence/`: metrics, benchmark files, figures and tables); the report is written "
           "from that evidence by the code of the workflow's report rule, as `snakemake reports/artifact_evaluation.md` "
           "would write it over the same builds. A paper is published only where the files its verdicts depend on are "
           "those of the published commit (the banner above says which have changed since).", "",
           "The report: [artifact_evaluation.md](artifact_evaluation.md)"
           + (" and [artifact_evaluation.html](artifact_evaluation.html) (figures inline)." if has_html else "."), "",
           "Costs: jobs, CPU-s and wall s summed over the jobs' benchmark files, the peak RSS of any job, and the "
           "CPU-s of the whole build of the paper as the kernel counts it (snakemake and every process it started), "
           "with the sittings it took; a sitting lost without a record makes that a lower bound. The build's CPU-s "
           "is the measure: a benchmark file's cpu_time misses what a job spent after Snakemake's last sample of its "
           "process tree (every 0.5 s for the first 15 s, then every 30 s), so the jobs' sum reads low, most for "
           "jobs of half a minute to a few minutes. "
           "A job shared by "
           "several papers (the WSI stage, the language-model cache) is counted with the first paper built that "
           "needs it.", "",
           "| paper | verdicts (reproduction / substitute / code check) | built at commit, published | jobs | CPU-s (jobs) "
           "| wall s (jobs) | peak RSS MB | CPU-s (build, sittings) | wall s (build) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for p in papers:
        key = p["key"]
        if key not in published:
            continue
        rec = published[key]
        c, measured = rec["cost"], rec["cost"].get("measured") or {}
        out.append(f"| [{key}](artifact_evaluation.md#{key}) | {rec['counts']} | `{rec['commit'][:12]}`, {rec['date']} | "
                   f"{c['jobs']} | {c['cpu_s']} | {c['wall_s']} | "
                   f"{c['peak_rss_mb'] if c['peak_rss_mb'] is not None else '-'} | {_measured_text(measured)} | "
                   f"{measured.get('wall_s', '-')} |")
    t = build["total"]
    out += [f"| **total** | | | {t['jobs']} | {t['cpu_s']} | {t['wall_s']} | | {t.get('measured_cpu_s', '-')} | "
            f"{t.get('measured_wall_s', '-')} |", ""]
    missing = [p["key"] for p in papers if p["key"] not in published]
    if missing:
        out += [f"Not published yet (NOT RUN in the report): {', '.join(missing)}.", ""]
    machines = {json.dumps(rec["machine"], sort_keys=True) for rec in published.values()}
    for m in map(json.loads, sorted(machines)):
        keys = [k for k, rec in published.items() if rec["machine"] == m]
        out.append(f"- Machine of {', '.join(keys)}: {m['cpu']} ({m['cores']} cores, {m['memory_gb']} GB, "
                   f"{m['system']}, Python {m['python']}).")
    return "\n".join(out) + "\n"


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


def _check(key: str, build_dir: Path, repo: Path, measured: Mapping[str, Any], head: str) -> dict[str, Any]:
    """What publishing ``key`` from ``build_dir`` records of its build; raises ValueError where it may not."""
    if not (build_dir / "results" / key / "metrics.json").is_file():
        raise ValueError(f"{key}: {build_dir}/results/{key}/metrics.json is missing: build the paper first")
    entry = dict(measured.get(key, {}))
    if entry and not entry.get("complete", True):
        raise ValueError(f"{key} is not complete in {build_dir}/costs.json: rerun python -m repro.timedbuild there")
    now = fingerprint(key, repo)
    built_from = entry.pop("fingerprint", None)
    if built_from is not None and entry.get("commit"):
        built_from = adopt_unchanged(key, built_from, entry["commit"], repo)
    if built_from is not None and built_from != now:
        diffs = stale({key: built_from}, repo)[key]
        raise ValueError(f"{key} was built from other inputs than commit {head[:12]} has "
                         f"({', '.join(diffs[:4])}): rebuild it (python -m repro.timedbuild in {build_dir})")
    commit = entry.pop("commit", None) or git_commit(build_dir)["commit"] or head
    for transient in ("complete", "running", "fingerprint_started"):
        entry.pop(transient, None)
    return {"commit": commit, "measured": entry, "fingerprint": now}


def _replace_evidence(key: str, build_dir: Path, evidence: Path, repo: Path) -> None:
    """``key``'s evidence under ``evidence`` replaced whole by ``build_dir``'s."""
    evidence.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=evidence))
    try:
        for rel in evidence_files(key, build_dir, repo):
            (staged / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(build_dir / rel, staged / rel)
        clear_outputs(evidence, [key])
        for sub in ("results", "benchmarks"):
            if (staged / sub / key).exists():
                (evidence / sub).mkdir(exist_ok=True)
                os.replace(staged / sub / key, evidence / sub / key)
        (evidence / "reports").mkdir(exist_ok=True)
        for path in sorted((staged / "reports").glob("*")) if (staged / "reports").is_dir() else []:
            os.replace(path, evidence / "reports" / path.name)
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def assemble(to: str | Path = "docs/results", repo: str | Path = ".", record: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the report, ``build.json`` and the page in ``to`` from the published evidence; returns the record."""
    to, repo = Path(to), Path(repo).resolve()
    record = read_json(to / "build.json") if record is None else record
    evidence = to / EVIDENCE
    papers = load_papers(repo / "workflow/papers.yaml")
    built = {key: rec["targets"] for key, rec in record["papers"].items()}
    entries = collect(papers, built=built, claims_dir=repo / "workflow/claims",
                      schema_path=repo / "workflow/schemas/claims.schema.yaml",
                      results_dir=evidence / "results", benchmarks_dir=evidence / "benchmarks")
    for e in entries:
        if e.built:
            rec = record["papers"][e.key]
            rec["fingerprint"] = adopt_unchanged(e.key, rec["fingerprint"], built_at(record, e.key), repo)
            measured = rec.get("cost", {}).get("measured")
            rec.update(claims={r.claim.id: r.status for r in e.results}, counts=_counts_text(e.results),
                       cost=_costs(e, evidence / "benchmarks") | ({"measured": measured} if measured else {}))
    record["papers"] = {p["key"]: record["papers"][p["key"]] for p in papers if p["key"] in record["papers"]}
    total = {k: round(sum(p["cost"][k] for p in record["papers"].values()), 1) for k in ("jobs", "cpu_s", "wall_s")}
    for k in ("cpu_s", "wall_s"):
        measured = [p["cost"].get("measured", {}).get(k) for p in record["papers"].values()]
        if measured and None not in measured:
            total[f"measured_{k}"] = round(sum(measured), 1)
    record["total"] = total
    scales = sorted({p["scale"] for p in record["papers"].values()})
    scale = scales[0] if len(scales) == 1 else "mixed"
    with tempfile.TemporaryDirectory(dir=to) as tmp:
        html = Path(tmp) / "artifact_evaluation.html"
        write_report(entries, scale=scale, markdown_path=to / "artifact_evaluation.md", html_path=html,
                     reports_dir=evidence / "reports", figures_href=f"{EVIDENCE}/reports/")
        has_html = html.stat().st_size <= MAX_HTML_BYTES
        if has_html:
            os.replace(html, to / "artifact_evaluation.html")
        elif (to / "artifact_evaluation.html").exists():
            (to / "artifact_evaluation.html").unlink()
    write_json(to / "build.json", record)
    with atomic_open(to / "README.md", "w", encoding="utf-8") as fh:
        fh.write(_page(record, repo, papers, has_html))
    return record


def publish(build_dir: str | Path | None, to: str | Path = "docs/results", repo: str | Path = ".", *,
            papers: Iterable[str] | None = None, allow_dirty: bool = False) -> dict[str, Any]:
    """Add ``papers`` (default: every paper with a ``metrics.json``) built in ``build_dir`` to ``to``, then
    :func:`assemble` the report; with ``build_dir`` None, only assemble. Returns the build record."""
    to, repo = Path(to), Path(repo).resolve()
    head = git_commit(repo)
    if head["commit"] is None:
        raise ValueError(f"{repo}: not a git checkout; a published report must name its commit")
    if head["dirty"] and not allow_dirty:
        raise ValueError(f"{repo}: uncommitted changes; publish a build of a committed tree")
    listed = [p["key"] for p in load_papers(repo / "workflow/papers.yaml")]
    record = read_json(to / "build.json") if (to / "build.json").is_file() else {"papers": {}}
    if build_dir is not None:
        build_dir = Path(build_dir)
        keys = list(papers) if papers is not None else \
            [k for k in listed if (build_dir / "results" / k / "metrics.json").is_file()]
        unknown = sorted(set(keys) - set(listed))
        if unknown:
            raise ValueError(f"not paper keys: {', '.join(unknown)}")
        if not keys:
            raise ValueError(f"{build_dir}: no paper is built there (no results/<key>/metrics.json)")
        measured = read_json(build_dir / "costs.json") if (build_dir / "costs.json").is_file() else {}
        checked = {key: _check(key, build_dir, repo, measured, head["commit"]) for key in keys}  # all, before any write
        date, machine = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), _machine()
        to.mkdir(parents=True, exist_ok=True)
        for key, found in checked.items():
            _replace_evidence(key, build_dir, to / EVIDENCE, repo)
            record["papers"][key] = {"commit": found["commit"], "date": date, "machine": machine,
                                     "scale": _scale(build_dir / "results" / key / "metrics.json"),
                                     "targets": _targets(key, to / EVIDENCE), "fingerprint": found["fingerprint"],
                                     "cost": {"measured": found["measured"]}}
    elif not record["papers"]:
        raise ValueError(f"{to}: nothing is published yet; name a build folder")
    record["commit"] = head["commit"]
    return assemble(to, repo, record)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m repro.publish", description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", nargs="?", help="the folder the papers were built in (holds results/, "
                        "benchmarks/, reports/ and costs.json); none: rewrite the report from what is published")
    parser.add_argument("--papers", nargs="+", help="publish only these papers of the build folder")
    parser.add_argument("--to", default="docs/results", help="where to publish (default: docs/results)")
    parser.add_argument("--repo", default=".", help="repository root (default: the current folder)")
    args = parser.parse_args(argv)
    try:
        record = publish(args.build_dir, args.to, args.repo, papers=args.papers)
    except (OSError, ValueError) as err:
        print(f"publish: {err}")
        return 2
    print(f"{len(record['papers'])} papers published in {args.to} (record written at commit {record['commit'][:12]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
