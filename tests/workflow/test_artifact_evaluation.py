"""The whole smoke workflow ends in the artifact-evaluation report, claim by claim, for every paper.

Runs in the session's shared ``smoke_dir``: after the papers' own smoke tests it only adds the
report; run alone, it builds every paper's smoke DAG first.
"""

from __future__ import annotations

import re

import pytest

from repro.aereport import _verdicts_text, kind_counts, load_papers
from repro.claims import FAIL, INCONCLUSIVE, NOT_RUN, PASS, STATUSES, evaluate, load_claims
from tests.conftest import REPO, run_snakemake

SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"


def _registered_papers() -> list[str]:
    """Keys with a rules file that registers targets (the built papers)."""
    keys = []
    for rules in sorted((REPO / "workflow/rules").glob("*.smk")):
        m = re.search(r'register_targets\(\s*"(\w+)"', rules.read_text())
        if m:
            keys.append(m.group(1))
    return keys


@pytest.mark.slow
def test_smoke_workflow_builds_the_report_with_every_claim_of_every_paper(smoke_dir):
    run_snakemake(smoke_dir, "reports/artifact_evaluation.md", "reports/artifact_evaluation.html", timeout=2400)
    md = (smoke_dir / "reports/artifact_evaluation.md").read_text()
    html = (smoke_dir / "reports/artifact_evaluation.html").read_text()
    papers = load_papers(REPO / "workflow/papers.yaml")
    built = _registered_papers()
    assert len(built) >= 6 and set(built) <= {p["key"] for p in papers}
    assert f"Papers built: {len(built)} of {len(papers)}." in md and "`smoke`" in md

    total = dict.fromkeys(STATUSES, 0)
    every = []
    for p in papers:
        section = md.split(f"## {p['number']}. {p['key']}:")[1].split("\n## ")[0]
        if p["key"] not in built:
            assert "NOT RUN: this paper is not built yet." in section
            continue
        # each built paper's rows carry the status its own metrics file gives, claim by claim
        results = evaluate(load_claims(REPO / f"workflow/claims/{p['key']}.yaml", SCHEMA),
                           smoke_dir / f"results/{p['key']}/metrics.json")
        assert results, p["key"]
        for r in results:
            row = next(line for line in section.splitlines() if line.startswith(f"| `{r.claim.id}`"))
            # the verdict closes the row, qualified by kind (a substitute's FAIL, a code check) where it applies
            assert re.search(rf"\| \*\*{re.escape(r.status)}\*\*( \([^|]*\))? \|$", row), (p["key"], r.claim.id, row)
            assert f"| {r.kind.replace('_', ' ')}" in row, (p["key"], r.claim.id, row)
            total[r.status] += 1
            every.append(r)
        # measured from the benchmark files of this very build
        assert re.search(r"runtime \d+ s over [1-9]\d* jobs", section), p["key"]
        assert "--config scale=smoke" in section
    # the headline counts each kind apart: no count adds code checks to the papers' verdicts
    counts = kind_counts(every)
    assert (f"Reproduction verdicts (the paper's experiment, scaled down): {_verdicts_text(counts['reproduction'])}. "
            f"Substitute verdicts") in md
    assert f"never counted as the papers' verdicts): {_verdicts_text(counts['code_check'])}. NOT RUN: " in md
    assert total[PASS] + total[FAIL] + total[INCONCLUSIVE] > total[NOT_RUN]  # most claims are checkable at smoke
    for p in papers:
        assert p["key"] in html
