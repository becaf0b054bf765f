"""The artifact-evaluation report: every claim of every paper, what it states, what we measured.

One row per claim: the claim, its source, the paper's value, our estimate with its interval and
number of units, and the verdict (PASS / FAIL / INCONCLUSIVE / NOT RUN, :mod:`repro.claims`); per
paper the command that rebuilds it and the runtime of its jobs summed from the Snakemake benchmark
files, and per paper and overall the count of each verdict. Papers that are not built yet appear as
NOT RUN, so the report shows the whole mission.

Written as Markdown and as one standalone HTML page (nothing to fetch: a reviewer can mail it). The
page opens with an overview figure (verdicts per paper, inline SVG), and each paper's section shows
its built figures as images (the PDF's first page, rendered with pdfium) linking to the PDF and its
CSV, beside its claims, so claim, number and picture are read in one place. Below the claims, a
paper's diagnostics (:func:`repro.claims.measure`: what explains a verdict, with its interval and the
reading written before the numbers) are listed without a verdict.
"""

from __future__ import annotations

import base64
import csv
import html
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from repro.claims import (FAIL, INCONCLUSIVE, NOT_RUN, PASS, STATUSES, ClaimResult, DiagnosticResult, evaluate,
                           load_claim_file, measure)
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
    diagnostics: tuple[DiagnosticResult, ...] = ()


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
        claims, diagnostics = load_claim_file(claim_file, schema_path) if claim_file.exists() else ([], [])
        results = evaluate(claims, Path(results_dir) / key / "metrics.json") if key in built else \
            [ClaimResult(c, NOT_RUN, reason="paper not built yet") for c in claims]
        runtime, n_jobs = benchmark_seconds(Path(benchmarks_dir) / key)
        entries.append(PaperEntry(number=p["number"], key=key, title=p["title"],
                                  targets=tuple(built.get(key, ())), results=tuple(results),
                                  runtime_s=runtime, n_jobs=n_jobs, built=key in built,
                                  diagnostics=tuple(measure(diagnostics, Path(results_dir) / key if key in built else None))))
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


def _counts(results) -> dict[str, int]:
    return {status: sum(r.status == status for r in results) for status in STATUSES}


def _summary(entries: list[PaperEntry]) -> dict[str, int]:
    return _counts([r for e in entries for r in e.results])


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[s]} {s}" for s in STATUSES)


def _estimate(r: ClaimResult) -> str:
    """Our estimate with its interval and units, or why there is none."""
    if r.interval is None:
        return r.reason
    text = f"{r.interval} — {r.claim.describe_check()}"
    if r.reason:
        text += f"; {r.reason}"
    if r.note:
        text += f" — {r.note}"
    return text


def _diagnostic_estimate(m: DiagnosticResult) -> str:
    return f"{m.interval} — {m.diagnostic.describe()}" if m.interval is not None else m.reason


_DIAGNOSTICS_INTRO = "Diagnostics (not claims of the paper, no verdict: what explains the verdicts above)"


def render_markdown(entries: list[PaperEntry], *, scale: str) -> str:
    counts = _summary(entries)
    built = sum(e.built for e in entries)
    lines = [
        "# Artifact evaluation: NeurIPS 2026 reproductions",
        "",
        f"Scale of this build: `{scale}`. Papers built: {built} of {len(entries)}. "
        f"Claims: {_counts_text(counts)}.",
        "",
        "Each claim is checked with an interval of the compared quantity over its units (folds, seeds, "
        "replicates): PASS when the interval lies wholly on the claimed side, FAIL when wholly on the other, "
        "INCONCLUSIVE when it straddles (the rebuild cannot decide). A FAIL is a finding of this rebuild, "
        "reported as measured; checks are never tuned to pass. Defaults are offline: synthetic data with "
        "planted ground truth and the pretrained encoders that ship inside PyPI packages, in place of the "
        "papers' data and foundation models.",
        "",
        "| # | paper | built | claims | PASS | FAIL | INCONCLUSIVE | NOT RUN | runtime |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        n = _counts(e.results)
        lines.append(f"| {e.number} | {e.key}: {e.title} | {'yes' if e.built else 'not yet'} | {len(e.results)} | "
                     f"{n[PASS]} | {n[FAIL]} | {n[INCONCLUSIVE]} | {n[NOT_RUN]} | {_runtime(e)} |")
    for e in entries:
        lines += ["", f"## {e.number}. {e.key}: {e.title}", ""]
        if not e.built:
            lines.append("NOT RUN: this paper is not built yet.")
            continue
        lines += [f"Rebuild: `{_command(e, scale)}` — runtime {_runtime(e)}.", "",
                  f"Claims: {_counts_text(_counts(e.results))}.", ""]
        figures = [t for t in e.targets if t.endswith(".pdf")]
        if figures:
            lines += ["Figures: " + ", ".join(f"[{Path(t).name}]({Path(t).name})" for t in figures), ""]
        if not e.results:
            lines.append("No claims listed.")
            continue
        lines += ["| claim | source | paper | estimate [interval] (units) | verdict |", "|---|---|---|---|---|"]
        for r in e.results:
            lines.append(f"| `{r.claim.id}`: {r.claim.claim} | {r.claim.source} | {_fmt(r.claim.paper_value)} | "
                         f"{_estimate(r)} | **{r.status}** |")
        if e.diagnostics:
            lines += ["", f"{_DIAGNOSTICS_INTRO}:", "", "| diagnostic | estimate [interval] (units) | reading |", "|---|---|---|"]
            lines += [f"| `{m.diagnostic.id}`: {m.diagnostic.question} | {_diagnostic_estimate(m)} | {m.diagnostic.reading} |"
                      for m in e.diagnostics]
    return "\n".join(lines) + "\n"


_CSS = """body{font-family:sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0;width:100%}th,td{border:1px solid #ccc;padding:.3rem .5rem;
text-align:left;vertical-align:top;font-size:.9rem}th{background:#f3f3f3}code{font-size:.85rem}
.PASS{background:#e3f4e3}.FAIL{background:#fbe3e3}.INCONCLUSIVE{background:#fdf3d8}.NOTRUN{background:#f1f1f1;color:#555}
.figures{display:flex;flex-wrap:wrap;gap:1rem}.figures figure{margin:0;max-width:24rem}
.figures img{width:100%;border:1px solid #ddd}figcaption{font-size:.8rem}"""

#: Verdict colours of the overview figure (and the table rows' backgrounds, lighter).
VERDICT_COLORS = {PASS: "#2e8b57", FAIL: "#c0392b", INCONCLUSIVE: "#e0a800", NOT_RUN: "#b0b0b0"}


def overview_svg(entries: list[PaperEntry]) -> str:
    """Verdicts per paper as stacked horizontal bars (inline SVG: crisp, deterministic, no files)."""
    row, label_w, bar_w, top = 18, 150, 420, 28
    most = max([len(e.results) for e in entries] + [1])
    height = top + row * len(entries) + 8
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{label_w + bar_w + 60}' height='{height}' "
           "role='img' aria-label='verdicts per paper' font-family='sans-serif' font-size='11'>"]
    x = label_w
    for status in STATUSES:  # legend
        out.append(f"<rect x='{x}' y='4' width='10' height='10' fill='{VERDICT_COLORS[status]}'/>"
                   f"<text x='{x + 14}' y='13'>{status}</text>")
        x += 14 + 8 * len(status) + 16
    for i, e in enumerate(entries):
        y = top + i * row
        out.append(f"<text x='{label_w - 6}' y='{y + 12}' text-anchor='end'>{e.number}. {html.escape(e.key)}</text>")
        x = float(label_w)
        if not e.results or not e.built:
            out.append(f"<text x='{x + 4}' y='{y + 12}' fill='#777'>not built yet</text>")
            continue
        for status, n in _counts(e.results).items():
            if n:
                w = bar_w * n / most
                out.append(f"<rect x='{x:.1f}' y='{y + 2}' width='{w:.1f}' height='{row - 5}' "
                           f"fill='{VERDICT_COLORS[status]}'><title>{e.key}: {n} {status}</title></rect>")
                x += w
        out.append(f"<text x='{x + 4:.1f}' y='{y + 12}'>{len(e.results)}</text>")
    out.append("</svg>")
    return "".join(out)


def figure_thumbnail(pdf: str | Path, width_px: int = 640) -> str | None:
    """The first page of ``pdf`` as a PNG data URI (``None`` when the file is absent or unreadable)."""
    import pypdfium2 as pdfium

    pdf = Path(pdf)
    if not pdf.exists():
        return None
    try:
        doc = pdfium.PdfDocument(str(pdf))
        page = doc[0]
        image = page.render(scale=width_px / page.get_width()).to_pil()
        buf = io.BytesIO()
        image.save(buf, format="PNG", optimize=True)
        doc.close()
    except pdfium.PdfiumError:
        return None
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _figures_html(e: PaperEntry, reports_dir: Path | None) -> str:
    figures = [t for t in e.targets if t.endswith(".pdf")]
    if not figures or reports_dir is None:
        return ""
    e_ = html.escape
    out = ["<div class='figures'>"]
    for target in figures:
        name = Path(target).name
        uri = figure_thumbnail(reports_dir / name)
        csv_name = Path(name).with_suffix(".csv").name
        links = f"<a href='{e_(name)}'>PDF</a>" + \
            (f" · <a href='{e_(csv_name)}'>CSV</a>" if (reports_dir / csv_name).exists() else "")
        img = f"<a href='{e_(name)}'><img src='{uri}' alt='{e_(name)}'></a>" if uri else "<p>(not built)</p>"
        out.append(f"<figure>{img}<figcaption><code>{e_(name)}</code> — {links}</figcaption></figure>")
    out.append("</div>")
    return "".join(out)


def render_html(entries: list[PaperEntry], *, scale: str, reports_dir: str | Path | None = None) -> str:
    """The report as one standalone page; ``reports_dir`` holds the built figures to show."""
    e_ = html.escape
    reports = Path(reports_dir) if reports_dir is not None else None
    counts = _summary(entries)
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>Artifact evaluation</title>",
           f"<style>{_CSS}</style></head><body>", "<h1>Artifact evaluation: NeurIPS 2026 reproductions</h1>",
           f"<p>Scale: <code>{e_(scale)}</code>. Claims: {_counts_text(counts)}. Each verdict comes from an "
           "interval over the claim's units; INCONCLUSIVE means the rebuild cannot decide. A FAIL is a finding, "
           "reported as measured.</p>", f"<figure id='overview'>{overview_svg(entries)}</figure>"]
    for e in entries:
        out.append(f"<h2 id='{e_(e.key)}'>{e.number}. {e_(e.key)}: {e_(e.title)}</h2>")
        if not e.built:
            out.append("<p class='NOTRUN'>NOT RUN: this paper is not built yet.</p>")
            continue
        out.append(f"<p>Rebuild: <code>{e_(_command(e, scale))}</code> — runtime {e_(_runtime(e))}. "
                   f"Claims: {_counts_text(_counts(e.results))}.</p>")
        out.append(_figures_html(e, reports))
        out.append("<table><tr><th>claim</th><th>source</th><th>paper</th><th>estimate [interval] (units)</th>"
                   "<th>verdict</th></tr>")
        for r in e.results:
            css = r.status.replace(" ", "")
            out.append(f"<tr class='{css}'><td><code>{e_(r.claim.id)}</code>: {e_(r.claim.claim)}</td>"
                       f"<td>{e_(r.claim.source)}</td><td>{e_(_fmt(r.claim.paper_value))}</td>"
                       f"<td>{e_(_estimate(r))}</td><td><b>{r.status}</b></td></tr>")
        out.append("</table>")
        if e.diagnostics:
            out.append(f"<p>{e_(_DIAGNOSTICS_INTRO)}:</p><table><tr><th>diagnostic</th>"
                       "<th>estimate [interval] (units)</th><th>reading</th></tr>")
            out += [f"<tr><td><code>{e_(m.diagnostic.id)}</code>: {e_(m.diagnostic.question)}</td>"
                    f"<td>{e_(_diagnostic_estimate(m))}</td><td>{e_(m.diagnostic.reading)}</td></tr>" for m in e.diagnostics]
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_report(entries: list[PaperEntry], *, scale: str, markdown_path: str | Path, html_path: str | Path,
                 reports_dir: str | Path | None = None) -> None:
    with atomic_open(markdown_path, "w", encoding="utf-8") as fh:
        fh.write(render_markdown(entries, scale=scale))
    with atomic_open(html_path, "w", encoding="utf-8") as fh:
        fh.write(render_html(entries, scale=scale, reports_dir=reports_dir))
