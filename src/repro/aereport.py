"""The artifact-evaluation report: every claim of every paper, what it states, what we measured.

One row per claim: paper, claim, source, the paper's value, the measured value, PASS / FAIL /
NOT RUN, the command that rebuilds it, and the runtime of the paper's jobs summed from the
Snakemake benchmark files. Papers that are not built yet appear as NOT RUN, so the report shows
the whole mission. Written as Markdown and as a standalone HTML page.
"""

from __future__ import annotations

import csv
import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from repro.claims import FAIL, NOT_RUN, PASS, ClaimResult, evaluate, load_claims
from repro.io import atomic_open

__all__ = ["PaperEntry", "load_papers", "benchmark_seconds", "collect", "render_markdown", "render_html", "write_report"]


@dataclass(frozen=True)
class PaperEntry:
    number: int
    key: str
    title: str
    targets: tuple[str, ...]
    results: tuple[ClaimResult, ...]
    runtime_s: float | None
    n_jobs: int
    built: bool


def load_papers(path: str | Path) -> list[dict[str, Any]]:
    """The registry of the 19 papers (``workflow/papers.yaml``)."""
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    papers = doc["papers"]
    keys = [p["key"] for p in papers]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{path}: duplicate paper keys")
    return papers


def benchmark_seconds(folder: str | Path) -> tuple[float | None, int]:
    """Sum of the ``s`` column of every Snakemake benchmark TSV under ``folder``, and the job count."""
    folder = Path(folder)
    total, count = 0.0, 0
    for tsv in sorted(folder.rglob("*.tsv")) if folder.exists() else []:
        with open(tsv, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        for row in rows[-1:]:  # the last repeat of a job
            try:
                total += float(row["s"])
                count += 1
            except (KeyError, ValueError):
                continue
    return (total if count else None), count


def collect(papers: list[dict[str, Any]], *, built: dict[str, list[str]], claims_dir: str | Path,
            schema_path: str | Path, results_dir: str | Path, benchmarks_dir: str | Path) -> list[PaperEntry]:
    """Evaluate the claims of every paper in the registry; ``built`` maps built keys to targets."""
    entries = []
    for p in papers:
        key = p["key"]
        claim_file = Path(claims_dir) / f"{key}.yaml"
        claims = load_claims(claim_file, schema_path) if claim_file.exists() else []
        results = evaluate(claims, Path(results_dir) / key / "metrics.json") if key in built else \
            [ClaimResult(c, NOT_RUN, reason="paper not built yet") for c in claims]
        runtime, n_jobs = benchmark_seconds(Path(benchmarks_dir) / key)
        entries.append(PaperEntry(number=p["number"], key=key, title=p["title"],
                                  targets=tuple(built.get(key, ())), results=tuple(results),
                                  runtime_s=runtime, n_jobs=n_jobs, built=key in built))
    return entries


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _command(entry: PaperEntry, scale: str) -> str:
    if not entry.targets:
        return "—"
    return f"snakemake {' '.join(entry.targets)} --config scale={scale}"


def _runtime(entry: PaperEntry) -> str:
    if entry.runtime_s is None:
        return "not measured"
    return f"{entry.runtime_s:.0f} s over {entry.n_jobs} jobs"


def _summary(entries: list[PaperEntry]) -> dict[str, int]:
    counts = {PASS: 0, FAIL: 0, NOT_RUN: 0}
    for e in entries:
        for r in e.results:
            counts[r.status] += 1
    return counts


def _measured(r: ClaimResult) -> str:
    if r.measured is None:
        return r.reason
    text = f"{r.measured:.4g} ({r.claim.describe_check()}"
    if not isinstance(r.claim.rhs, (int, float)):
        text += f"; rhs = {r.rhs_value:.4g}"
    text += ")"
    if r.scale_note:
        text += f" — {r.scale_note}"
    return text


def render_markdown(entries: list[PaperEntry], *, scale: str) -> str:
    counts = _summary(entries)
    built = sum(e.built for e in entries)
    lines = [
        "# Artifact evaluation: NeurIPS 2026 reproductions",
        "",
        f"Scale of this build: `{scale}`. Papers built: {built} of {len(entries)}. "
        f"Claims: {counts[PASS]} PASS, {counts[FAIL]} FAIL, {counts[NOT_RUN]} NOT RUN.",
        "",
        "A FAIL is a finding of this rebuild, reported as measured; checks are never tuned to pass. "
        "Defaults are offline: synthetic data with planted ground truth and the pretrained encoders "
        "that ship inside PyPI packages, in place of the papers' data and foundation models.",
        "",
        "| # | paper | built | claims | PASS | FAIL | NOT RUN | runtime |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        n = {s: sum(r.status == s for r in e.results) for s in (PASS, FAIL, NOT_RUN)}
        lines.append(f"| {e.number} | {e.key}: {e.title} | {'yes' if e.built else 'not yet'} | {len(e.results)} | "
                     f"{n[PASS]} | {n[FAIL]} | {n[NOT_RUN]} | {_runtime(e)} |")
    for e in entries:
        lines += ["", f"## {e.number}. {e.key}: {e.title}", ""]
        if not e.built:
            lines.append("NOT RUN: this paper is not built yet.")
            continue
        lines += [f"Rebuild: `{_command(e, scale)}` — runtime {_runtime(e)}.", ""]
        if not e.results:
            lines.append("No claims listed.")
            continue
        lines += ["| claim | source | paper | measured | status |", "|---|---|---|---|---|"]
        for r in e.results:
            lines.append(f"| `{r.claim.id}`: {r.claim.claim} | {r.claim.source} | {_fmt(r.claim.paper_value)} | "
                         f"{_measured(r)} | **{r.status}** |")
    return "\n".join(lines) + "\n"


_CSS = """body{font-family:sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0;width:100%}th,td{border:1px solid #ccc;padding:.3rem .5rem;
text-align:left;vertical-align:top;font-size:.9rem}th{background:#f3f3f3}code{font-size:.85rem}
.PASS{background:#e3f4e3}.FAIL{background:#fbe3e3}.NOTRUN{background:#f1f1f1;color:#555}"""


def render_html(entries: list[PaperEntry], *, scale: str) -> str:
    e_ = html.escape
    counts = _summary(entries)
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>Artifact evaluation</title>",
           f"<style>{_CSS}</style></head><body>", "<h1>Artifact evaluation: NeurIPS 2026 reproductions</h1>",
           f"<p>Scale: <code>{e_(scale)}</code>. Claims: {counts[PASS]} PASS, {counts[FAIL]} FAIL, "
           f"{counts[NOT_RUN]} NOT RUN. A FAIL is a finding, reported as measured.</p>"]
    for e in entries:
        out.append(f"<h2>{e.number}. {e_(e.key)}: {e_(e.title)}</h2>")
        if not e.built:
            out.append("<p class='NOTRUN'>NOT RUN: this paper is not built yet.</p>")
            continue
        out.append(f"<p>Rebuild: <code>{e_(_command(e, scale))}</code> — runtime {e_(_runtime(e))}.</p>")
        out.append("<table><tr><th>claim</th><th>source</th><th>paper</th><th>measured</th><th>status</th></tr>")
        for r in e.results:
            css = r.status.replace(" ", "")
            out.append(f"<tr class='{css}'><td><code>{e_(r.claim.id)}</code>: {e_(r.claim.claim)}</td>"
                       f"<td>{e_(r.claim.source)}</td><td>{e_(_fmt(r.claim.paper_value))}</td>"
                       f"<td>{e_(_measured(r))}</td><td><b>{r.status}</b></td></tr>")
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_report(entries: list[PaperEntry], *, scale: str, markdown_path: str | Path, html_path: str | Path) -> None:
    with atomic_open(markdown_path, "w", encoding="utf-8") as fh:
        fh.write(render_markdown(entries, scale=scale))
    with atomic_open(html_path, "w", encoding="utf-8") as fh:
        fh.write(render_html(entries, scale=scale))
