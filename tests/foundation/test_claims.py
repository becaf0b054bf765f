"""Claims: checks against hand-written metrics, schema errors, and the AE report over 19 papers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from repro.aereport import collect, load_papers, render_html, render_markdown
from repro.claims import FAIL, NOT_RUN, PASS, evaluate, load_claims
from repro.io import write_json

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"

CLAIMS = {
    "paper": "demo",
    "title": "Demo paper",
    "claims": [
        {"id": "above", "claim": "a > 0.9", "source": "abstract", "metric": "a", "check": {"op": ">", "rhs": 0.9}, "scale": "smoke"},
        {"id": "below", "claim": "a < 0.5", "source": "Table 1", "metric": "a", "check": {"op": "<", "rhs": 0.5}, "scale": "smoke"},
        {"id": "beats", "claim": "ours >= baseline", "source": "Table 2", "metric": "m.ours",
         "check": {"op": ">=", "rhs": "m.base"}, "scale": "smoke"},
        {"id": "close", "claim": "cov ~ 0.95", "source": "Fig. 1", "metric": "cov.0", "check": {"op": "within", "rhs": 0.95, "tol": 0.02},
         "scale": "small"},
        {"id": "absent", "claim": "x exists", "source": "abstract", "metric": "nothing.here", "check": {"op": ">", "rhs": 0}, "scale": "smoke"},
    ],
}


def _write(tmp_path: Path, doc: dict, name: str = "demo") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_checks_give_pass_fail_and_not_run(tmp_path):
    claims = load_claims(_write(tmp_path, CLAIMS), SCHEMA)
    metrics = tmp_path / "metrics.json"
    write_json(metrics, {"a": 0.93, "m": {"ours": 0.70, "base": 0.71}, "cov": [0.94],
                         "provenance": {"scale": "smoke"}})
    status = {r.claim.id: r for r in evaluate(claims, metrics)}
    assert status["above"].status == PASS
    assert status["below"].status == FAIL
    assert status["beats"].status == FAIL and status["beats"].rhs_value == pytest.approx(0.71)
    assert status["close"].status == PASS  # |0.94 - 0.95| <= 0.02
    assert "expected to hold from scale small" in status["close"].scale_note
    assert status["absent"].status == NOT_RUN and "nothing.here" in status["absent"].reason


def test_within_boundary_and_nan(tmp_path):
    claims = load_claims(_write(tmp_path, CLAIMS), SCHEMA)
    metrics = tmp_path / "metrics.json"
    write_json(metrics, {"a": float("nan"), "m": {"ours": 1, "base": 1}, "cov": [0.97]})
    status = {r.claim.id: r.status for r in evaluate(claims, metrics)}
    assert status["close"] == PASS  # exactly on the tolerance: |0.97 - 0.95| = 0.02
    assert status["beats"] == PASS  # ties satisfy >=
    assert status["above"] == NOT_RUN  # NaN is written as null: not a number, so not measured


def test_missing_metrics_file_is_not_run(tmp_path):
    claims = load_claims(_write(tmp_path, CLAIMS), SCHEMA)
    assert {r.status for r in evaluate(claims, tmp_path / "none.json")} == {NOT_RUN}


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["claims"][0].update(metirc="a"), "metirc"),              # typo in a key
    (lambda d: d["claims"][0]["check"].update(op="=>"), "=>"),            # unknown operator
    (lambda d: d["claims"][0].pop("scale"), "scale"),                     # missing field
    (lambda d: d["claims"][3]["check"].pop("tol"), "within"),             # within without tol
    (lambda d: d["claims"].append(dict(d["claims"][0])), "duplicate"),    # repeated id
])
def test_claim_file_with_a_typo_is_rejected(tmp_path, mutate, message):
    import copy

    doc = copy.deepcopy(CLAIMS)
    mutate(doc)
    with pytest.raises(ValueError, match=message):
        load_claims(_write(tmp_path, doc), SCHEMA)


def test_paper_key_must_match_file_name(tmp_path):
    with pytest.raises(ValueError, match="does not match"):
        load_claims(_write(tmp_path, CLAIMS, name="other"), SCHEMA)


def test_every_committed_claim_file_is_valid():
    papers = {p["key"] for p in load_papers(REPO / "workflow/papers.yaml")}
    for path in sorted((REPO / "workflow/claims").glob("*.yaml")):
        assert path.stem in papers, f"{path.name} names no paper of workflow/papers.yaml"
        assert load_claims(path, SCHEMA), path


def test_report_lists_all_19_papers_and_marks_unbuilt_ones(tmp_path):
    claims_dir = tmp_path / "claims"
    claims_dir.mkdir()
    _write(claims_dir, CLAIMS)
    papers = load_papers(REPO / "workflow/papers.yaml") + [{"number": 20, "key": "demo", "title": "Demo"}]
    write_json(tmp_path / "results/demo/metrics.json", {"a": 0.95, "m": {"ours": 2, "base": 1}, "cov": [0.5]})
    bench = tmp_path / "benchmarks/demo/x.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\n12.5\t0:00:12\t100\n")
    entries = collect(papers, built={"demo": ["reports/demo_fig1.pdf"]}, claims_dir=claims_dir, schema_path=SCHEMA,
                      results_dir=tmp_path / "results", benchmarks_dir=tmp_path / "benchmarks")
    md = render_markdown(entries, scale="smoke")
    assert len(papers) == 20 and all(f"## {p['number']}. {p['key']}" in md for p in papers)
    assert md.count("NOT RUN: this paper is not built yet.") == 19
    assert "snakemake reports/demo_fig1.pdf --config scale=smoke" in md
    assert "12 s over 1 jobs" in md
    assert "2 PASS, 2 FAIL, 1 NOT RUN" in md
    assert "<td><b>FAIL</b></td>" in render_html(entries, scale="smoke")
