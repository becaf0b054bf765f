"""The artifact-evaluation report: every claim of every paper, what it states, what we measured.

One row per claim: the claim with its note, its kind (reproduction, substitute with what stands in for
what, or code check) for the build that produced the number, its source, the paper's value, our
estimate with its interval and number of units (for an INCONCLUSIVE one, the units that would decide it
and their cost), and the verdict (PASS / FAIL / INCONCLUSIVE / UNDECIDABLE / NOT RUN, :mod:`repro.claims`).
A paper's section opens with what its rebuild is. Per paper the command that rebuilds it and the runtime
of its jobs summed from the Snakemake benchmark files; per paper and overall the verdicts counted by
kind: a reproduction's verdicts, a substitute's, and the code checks apart (they verify our code, not
the paper), never added together. Papers that are not built yet appear as NOT RUN, so the report shows
the whole mission.

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

from repro.claims import (CODE_CHECK, FAIL, INCONCLUSIVE, KINDS, NOT_RUN, PASS, REPRODUCTION, STATUSES, SUBSTITUTE,
                           UNDECIDABLE, ClaimResult, DiagnosticResult, evaluate, measure, read_claim_file)
from repro.io import atomic_open

__all__ = ["PaperEntry", "load_papers", "benchmark_seconds", "collect", "kind_counts", "verdict_label", "render_markdown",
           "render_html", "write_report", "KIND_LABELS", "VERDICT_COLORS"]


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
    rebuild: str = ""
    """what this rebuild is (the claim file's ``rebuild``)"""
    kind: Any = None
    """the claim file's default kind, and why"""
    kind_reason: str = ""
    cpu_s: float | None = None
    """CPU-seconds of its jobs from the benchmark files (wall seconds where a file has no cpu_time)"""


def load_papers(path: str | Path) -> list[dict[str, Any]]:
    """The registry of the 19 papers (``workflow/papers.yaml``)."""
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    papers = doc["papers"]
    keys = [p["key"] for p in papers]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{path}: duplicate paper keys")
    return papers


def benchmark_seconds(folder: str | Path, column: str = "s") -> tuple[float | None, int]:
    """Sum of the ``column`` column (``s``: wall seconds; ``cpu_time``: CPU seconds, the wall seconds
    where a file lacks it) of every Snakemake benchmark TSV under ``folder``, and the job count."""
    folder = Path(folder)
    total, count = 0.0, 0
    for tsv in sorted(folder.rglob("*.tsv")) if folder.exists() else []:
        with open(tsv, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        for row in rows[-1:]:  # the last repeat of a job
            for key in dict.fromkeys((column, "s")):
                try:
                    total += float(row[key])
                    count += 1
                    break
                except (KeyError, TypeError, ValueError):
                    continue
    return (total if count else None), count


def collect(papers: list[dict[str, Any]], *, built: dict[str, list[str]], claims_dir: str | Path,
            schema_path: str | Path, results_dir: str | Path, benchmarks_dir: str | Path) -> list[PaperEntry]:
    """Evaluate the claims of every paper in the registry; ``built`` maps built keys to targets."""
    entries = []
    for p in papers:
        key = p["key"]
        claim_file = Path(claims_dir) / f"{key}.yaml"
        doc = read_claim_file(claim_file, schema_path) if claim_file.exists() else None
        claims, diagnostics = (list(doc.claims), list(doc.diagnostics)) if doc else ([], [])
        results = evaluate(claims, Path(results_dir) / key / "metrics.json") if key in built else \
            [ClaimResult(c, NOT_RUN, reason="paper not built yet") for c in claims]
        runtime, n_jobs = benchmark_seconds(Path(benchmarks_dir) / key)
        cpu, _ = benchmark_seconds(Path(benchmarks_dir) / key, column="cpu_time")
        entries.append(PaperEntry(number=p["number"], key=key, title=p["title"],
                                  targets=tuple(built.get(key, ())), results=tuple(results),
                                  runtime_s=runtime, n_jobs=n_jobs, built=key in built,
                                  diagnostics=tuple(measure(diagnostics, Path(results_dir) / key if key in built else None)),
                                  rebuild=doc.rebuild if doc else "", kind=doc.kind if doc else None,
                                  kind_reason=doc.kind_reason if doc else "", cpu_s=cpu))
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


#: How each kind's verdicts are headed in the report.
KIND_LABELS = {REPRODUCTION: "reproduction", SUBSTITUTE: "substitute", CODE_CHECK: "code checks"}


def kind_counts(results) -> dict[str, Any]:
    """The verdicts counted apart by kind (``{kind: {status: n}}``, NOT RUN left out) and the NOT RUN count.

    A code check verifies our code, a substitute's verdict is about the substitutes: no count adds
    them to a reproduction's.
    """
    out: dict[str, Any] = {k: dict.fromkeys((s for s in STATUSES if s != NOT_RUN), 0) for k in KINDS}
    for r in results:
        if r.status != NOT_RUN:
            out[r.kind][r.status] += 1
    out[NOT_RUN] = sum(r.status == NOT_RUN for r in results)
    return out


def _summary(entries: list[PaperEntry]) -> dict[str, Any]:
    return kind_counts([r for e in entries for r in e.results])


def _verdicts_text(counts: dict[str, int]) -> str:
    """``2 PASS, 1 FAIL`` (the statuses that occur), or ``none``."""
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none"


def _counts_text(counts: dict[str, Any]) -> str:
    """One paper's (or all papers') verdicts, split by kind; never one total over kinds."""
    return (f"reproduction verdicts: {_verdicts_text(counts[REPRODUCTION])}; substitute verdicts: "
            f"{_verdicts_text(counts[SUBSTITUTE])}; code checks (our code, counted apart): "
            f"{_verdicts_text(counts[CODE_CHECK])}; NOT RUN: {counts[NOT_RUN]}")


def _total_line(entries: list[PaperEntry]) -> str:
    counts = _summary(entries)
    n = sum(len(e.results) for e in entries)
    return (f"Claims: {n}. Reproduction verdicts (the paper's experiment, scaled down): "
            f"{_verdicts_text(counts[REPRODUCTION])}. Substitute verdicts (named substitutions; a FAIL is not "
            f"reproduced with these substitutes): {_verdicts_text(counts[SUBSTITUTE])}. Code checks (our testbed "
            f"and code, never counted as the papers' verdicts): {_verdicts_text(counts[CODE_CHECK])}. "
            f"NOT RUN: {counts[NOT_RUN]}.")


def verdict_label(r: ClaimResult) -> tuple[str, str]:
    """The verdict and what qualifies it by kind: a substitute's FAIL is not a refutation, a code check
    verifies our code, an UNDECIDABLE says why."""
    if r.status == NOT_RUN:
        return r.status, ""
    if r.status == UNDECIDABLE and r.claim.ceiling is not None:
        return r.status, f"ceiling: {r.claim.ceiling['reason']}"
    if r.kind == CODE_CHECK:
        return r.status, "code check: our testbed or code is wrong" if r.status == FAIL else "code check"
    if r.kind == SUBSTITUTE and r.status == FAIL:
        return r.status, "not reproduced with these substitutes"
    return r.status, ""


def _kind_text(r: ClaimResult) -> str:
    """The kind for this build, with what stands in for what, and the claim's own reason when it overrides."""
    text = r.kind.replace("_", " ")
    if r.substitutes:
        text += ": " + " · ".join(str(s) for s in r.substitutes)
    if r.claim.kind_own:
        text += f" ({r.claim.kind_reason})"
    return text


def _claim_text(r: ClaimResult) -> str:
    text = r.claim.claim
    if r.claim.note:
        text += f" Note: {r.claim.note}"
    if r.claim.floor:
        text += f" Floor: {r.claim.floor}."
    return text


def _to_decide(r: ClaimResult, e: PaperEntry | None = None) -> str:
    """For an INCONCLUSIVE verdict: the units that would decide it, and what that many units of this
    preset cost (its jobs' CPU scaled by units needed / units now, where the benchmark files give it)."""
    if r.status != INCONCLUSIVE or not r.to_decide:
        return ""
    text = f"to decide: {r.to_decide}"
    if e is not None and e.cpu_s and r.units_needed and r.units_have:
        hours = e.cpu_s * r.units_needed / r.units_have / 3600
        text += f"; about {hours:.3g} CPU-h for the preset's build at that many units (now {e.cpu_s / 3600:.3g} CPU-h, if its cost scales with them)"
    return text


def _estimate(r: ClaimResult, e: PaperEntry | None = None) -> str:
    """Our estimate with its interval and units, or why there is none; for an INCONCLUSIVE one, what would decide it."""
    if r.interval is None:
        text = r.reason
    else:
        text = f"{r.interval} — {r.claim.describe_check()}"
        if r.reason:
            text += f"; {r.reason}"
    if r.note:
        text += f" — {r.note}"
    decide = _to_decide(r, e)
    return f"{text} — {decide}" if decide else text


def _cell(text: str) -> str:
    """Text for a markdown table cell (a pipe would end the cell)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _diagnostic_estimate(m: DiagnosticResult) -> str:
    """The interval and what it measures (with the units left out as undefined, if any), or why there is none."""
    if m.interval is None:
        return m.reason
    return f"{m.interval} — {m.diagnostic.describe()}" + (f" — {m.reason}" if m.reason else "")


_DIAGNOSTICS_INTRO = "Diagnostics (not claims of the paper, no verdict: what explains the verdicts above)"


_INTRO = ("Each claim is checked with an interval of the compared quantity over its units (folds, seeds, "
          "replicates): PASS when the interval lies wholly on the claimed side, FAIL when wholly on the other, "
          "INCONCLUSIVE when it straddles (the rebuild cannot decide; the units that would decide it are given), "
          "UNDECIDABLE when the metric sits at its bound (a ceiling) so that no difference can show. What a verdict "
          "is evidence of is the claim's kind: a reproduction (the paper's experiment with its own components, "
          "scaled down), a substitute (named substitutions: a FAIL means not reproduced with these substitutes, "
          "never refuted) or a code check (holds by construction of our testbed or is an identity of the model: "
          "it verifies our code and is counted apart). Checks are never tuned to pass.")


def render_markdown(entries: list[PaperEntry], *, scale: str, figures_href: str = "") -> str:
    """The report as Markdown; ``figures_href`` is the figures' folder relative to it (beside it by default).

    Each paper's section opens with an anchor named by its key (``artifact_evaluation.md#<key>``)."""
    built = sum(e.built for e in entries)
    lines = [
        "# Artifact evaluation: NeurIPS 2026 reproductions",
        "",
        f"Scale of this build: `{scale}`. Papers built: {built} of {len(entries)}. {_total_line(entries)}",
        "",
        _INTRO,
        "",
        "| # | paper | built | claims | reproduction | substitute | code checks | NOT RUN | runtime |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        n = kind_counts(e.results)
        lines.append(f"| {e.number} | {_cell(f'{e.key}: {e.title}')} | {'yes' if e.built else 'not yet'} | {len(e.results)} | "
                     f"{_verdicts_text(n[REPRODUCTION])} | {_verdicts_text(n[SUBSTITUTE])} | "
                     f"{_verdicts_text(n[CODE_CHECK])} | {n[NOT_RUN]} | {_runtime(e)} |")
    for e in entries:
        lines += ["", f'<a id="{e.key}"></a>', "", f"## {e.number}. {e.key}: {e.title}", ""]
        if e.rebuild:
            lines += [f"What this rebuild is: {e.rebuild}", ""]
        if e.kind is not None:
            lines += [f"Kind of its claims (unless a row says otherwise): {_kind_name(e.kind)} — {e.kind_reason}", ""]
        if not e.built:
            lines.append("NOT RUN: this paper is not built yet.")
            continue
        lines += [f"Rebuild: `{_command(e, scale)}` — runtime {_runtime(e)}.", "",
                  f"Claims: {_counts_text(kind_counts(e.results))}.", ""]
        figures = [t for t in e.targets if t.endswith(".pdf")]
        if figures:
            lines += ["Figures: " + ", ".join(f"[{Path(t).name}]({figures_href}{Path(t).name})" for t in figures), ""]
        if not e.results:
            lines.append("No claims listed.")
            continue
        lines += ["| claim | kind | source | paper | estimate [interval] (units) | verdict |", "|---|---|---|---|---|---|"]
        for r in e.results:
            status, why = verdict_label(r)
            lines.append(f"| `{r.claim.id}`: {_cell(_claim_text(r))} | {_cell(_kind_text(r))} | {_cell(r.claim.source)} | "
                         f"{_cell(_fmt(r.claim.paper_value))} | {_cell(_estimate(r, e))} | **{status}**"
                         + (f" ({_cell(why)})" if why else "") + " |")
        if e.diagnostics:
            lines += ["", f"{_DIAGNOSTICS_INTRO}:", "", "| diagnostic | estimate [interval] (units) | reading |", "|---|---|---|"]
            lines += [f"| `{m.diagnostic.id}`: {_cell(m.diagnostic.question)} | {_cell(_diagnostic_estimate(m))} | "
                      f"{_cell(m.diagnostic.reading)} |" for m in e.diagnostics]
    return "\n".join(lines) + "\n"


def _kind_name(kind: Any) -> str:
    """A file's default kind, one or per scale."""
    if isinstance(kind, str):
        return kind.replace("_", " ")
    return ", ".join(f"{k.replace('_', ' ')} at {s}" for s, k in kind.items())


_CSS = """body{font-family:sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0;width:100%}th,td{border:1px solid #ccc;padding:.3rem .5rem;
text-align:left;vertical-align:top;font-size:.9rem}th{background:#f3f3f3}code{font-size:.85rem}
.PASS{background:#e3f4e3}.FAIL{background:#fbe3e3}.INCONCLUSIVE{background:#fdf3d8}.UNDECIDABLE{background:#ece6f5}
.NOTRUN{background:#f1f1f1;color:#555}.note{font-size:.8rem;color:#444;margin:.2rem 0 0}.rebuild{font-style:italic}
.figures{display:flex;flex-wrap:wrap;gap:1rem}.figures figure{margin:0;max-width:24rem}
.figures img{width:100%;border:1px solid #ddd}figcaption{font-size:.8rem}"""

#: Verdict colours of the overview figure (and the table rows' backgrounds, lighter).
VERDICT_COLORS = {PASS: "#2e8b57", FAIL: "#c0392b", INCONCLUSIVE: "#e0a800", UNDECIDABLE: "#7e57c2", NOT_RUN: "#b0b0b0"}


def overview_svg(entries: list[PaperEntry]) -> str:
    """Verdicts per paper as stacked bars in three panels, one per kind (reproduction, substitute, code
    checks), and the NOT RUN count beside them: no bar adds one kind's verdicts to another's (inline
    SVG: crisp, deterministic, no files)."""
    row, label_w, panel_w, gap, top = 18, 150, 190, 24, 46
    counts = {e.key: kind_counts(e.results) for e in entries}
    most = max([sum(c[k].values()) for c in counts.values() for k in KINDS] + [1])
    width = label_w + len(KINDS) * (panel_w + gap) + 70
    height = top + row * len(entries) + 8
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
           "role='img' aria-label='verdicts per paper, by kind' font-family='sans-serif' font-size='11'>"]
    x = label_w
    for status in STATUSES:  # legend
        out.append(f"<rect x='{x}' y='4' width='10' height='10' fill='{VERDICT_COLORS[status]}'/>"
                   f"<text x='{x + 14}' y='13'>{status}</text>")
        x += 14 + 7 * len(status) + 16
    for j, kind in enumerate(KINDS):  # panel headings
        x0 = label_w + j * (panel_w + gap)
        out.append(f"<text x='{x0}' y='{top - 8}' font-weight='bold'>{KIND_LABELS[kind]}</text>")
    out.append(f"<text x='{label_w + len(KINDS) * (panel_w + gap)}' y='{top - 8}' font-weight='bold'>NOT RUN</text>")
    for i, e in enumerate(entries):
        y = top + i * row
        out.append(f"<text x='{label_w - 6}' y='{y + 12}' text-anchor='end'>{e.number}. {html.escape(e.key)}</text>")
        if not e.results or not e.built:
            out.append(f"<text x='{label_w + 4}' y='{y + 12}' fill='#777'>not built yet</text>")
            continue
        for j, kind in enumerate(KINDS):
            x = float(label_w + j * (panel_w + gap))
            for status, n in counts[e.key][kind].items():
                if n:
                    w = panel_w * n / most
                    out.append(f"<rect x='{x:.1f}' y='{y + 2}' width='{w:.1f}' height='{row - 5}' "
                               f"fill='{VERDICT_COLORS[status]}'><title>{e.key}, {KIND_LABELS[kind]}: {n} {status}"
                               "</title></rect>")
                    x += w
            total = sum(counts[e.key][kind].values())
            if total:
                out.append(f"<text x='{x + 3:.1f}' y='{y + 12}'>{total}</text>")
        out.append(f"<text x='{label_w + len(KINDS) * (panel_w + gap)}' y='{y + 12}'>{counts[e.key][NOT_RUN]}</text>")
    out.append("</svg>")
    return "".join(out)


def figure_thumbnail(pdf: str | Path, width_px: int = 640, colors: int = 128) -> str | None:
    """The first page of ``pdf`` as a PNG data URI (``None`` when the file is absent or unreadable), in a
    palette of ``colors`` (a plot's flat colours survive it; the page is a third of its full-colour size)."""
    import pypdfium2 as pdfium

    pdf = Path(pdf)
    if not pdf.exists():
        return None
    try:
        doc = pdfium.PdfDocument(str(pdf))
        page = doc[0]
        image = page.render(scale=width_px / page.get_width()).to_pil().convert("RGB").quantize(colors=colors)
        buf = io.BytesIO()
        image.save(buf, format="PNG", optimize=True)
        doc.close()
    except pdfium.PdfiumError:
        return None
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _figures_html(e: PaperEntry, reports_dir: Path | None, href: str = "") -> str:
    figures = [t for t in e.targets if t.endswith(".pdf")]
    if not figures or reports_dir is None:
        return ""
    e_ = html.escape
    out = ["<div class='figures'>"]
    for target in figures:
        name = Path(target).name
        uri = figure_thumbnail(reports_dir / name)
        csv_name = Path(name).with_suffix(".csv").name
        links = f"<a href='{e_(href + name)}'>PDF</a>" + \
            (f" · <a href='{e_(href + csv_name)}'>CSV</a>" if (reports_dir / csv_name).exists() else "")
        img = f"<a href='{e_(href + name)}'><img src='{uri}' alt='{e_(name)}'></a>" if uri else "<p>(not built)</p>"
        out.append(f"<figure>{img}<figcaption><code>{e_(name)}</code> — {links}</figcaption></figure>")
    out.append("</div>")
    return "".join(out)


def render_html(entries: list[PaperEntry], *, scale: str, reports_dir: str | Path | None = None,
                figures_href: str = "") -> str:
    """The report as one standalone page; ``reports_dir`` holds the built figures to show (inline, as
    thumbnails), ``figures_href`` is where the page links them (relative to the page; beside it by default)."""
    e_ = html.escape
    reports = Path(reports_dir) if reports_dir is not None else None
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>Artifact evaluation</title>",
           f"<style>{_CSS}</style></head><body>", "<h1>Artifact evaluation: NeurIPS 2026 reproductions</h1>",
           f"<p>Scale: <code>{e_(scale)}</code>. {e_(_total_line(entries))}</p>", f"<p>{e_(_INTRO)}</p>",
           f"<figure id='overview'>{overview_svg(entries)}</figure>"]
    for e in entries:
        out.append(f"<h2 id='{e_(e.key)}'>{e.number}. {e_(e.key)}: {e_(e.title)}</h2>")
        if e.rebuild:
            out.append(f"<p class='rebuild'>What this rebuild is: {e_(e.rebuild)}</p>")
        if e.kind is not None:
            out.append(f"<p>Kind of its claims (unless a row says otherwise): <b>{e_(_kind_name(e.kind))}</b> — "
                       f"{e_(e.kind_reason)}</p>")
        if not e.built:
            out.append("<p class='NOTRUN'>NOT RUN: this paper is not built yet.</p>")
            continue
        out.append(f"<p>Rebuild: <code>{e_(_command(e, scale))}</code> — runtime {e_(_runtime(e))}. "
                   f"Claims: {e_(_counts_text(kind_counts(e.results)))}.</p>")
        out.append(_figures_html(e, reports, figures_href))
        out.append("<table><tr><th>claim</th><th>kind</th><th>source</th><th>paper</th>"
                   "<th>estimate [interval] (units)</th><th>verdict</th></tr>")
        for r in e.results:
            css = r.status.replace(" ", "")
            status, why = verdict_label(r)
            note = "".join(f"<p class='note'>{label}: {e_(text)}</p>" for label, text in
                           (("Note", r.claim.note), ("Floor", r.claim.floor)) if text)
            kind = e_(r.kind.replace("_", " "))
            if r.substitutes:
                kind += "<ul>" + "".join(f"<li>{e_(s.here)} <i>in place of</i> {e_(s.paper)}</li>" for s in r.substitutes) + "</ul>"
            if r.claim.kind_own:
                kind += f"<p class='note'>{e_(r.claim.kind_reason)}</p>"
            out.append(f"<tr class='{css}'><td><code>{e_(r.claim.id)}</code>: {e_(r.claim.claim)}{note}</td>"
                       f"<td>{kind}</td><td>{e_(r.claim.source)}</td><td>{e_(_fmt(r.claim.paper_value))}</td>"
                       f"<td>{e_(_estimate(r, e))}</td><td><b>{status}</b>{f' ({e_(why)})' if why else ''}</td></tr>")
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
                 reports_dir: str | Path | None = None, figures_href: str = "") -> None:
    with atomic_open(markdown_path, "w", encoding="utf-8") as fh:
        fh.write(render_markdown(entries, scale=scale, figures_href=figures_href))
    with atomic_open(html_path, "w", encoding="utf-8") as fh:
        fh.write(render_html(entries, scale=scale, reports_dir=reports_dir, figures_href=figures_href))
