"""Each paper page's claims section is generated from its claims file, and the committed pages are current."""

import pytest

from repro.claims import read_claim_file
from repro.claimsdoc import BEGIN, END, pages, render, update
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"


def test_every_committed_page_has_its_current_claims_section():
    stale = [p.name for p, text in pages(REPO).items() if p.read_text(encoding="utf-8") != text]
    assert not stale, f"stale claims sections: {stale}: run `python -m repro.claimsdoc`"


def test_the_section_lists_every_claim_with_its_kind_and_every_substitution():
    doc = read_claim_file(REPO / "workflow/claims/incrimination.yaml", SCHEMA)
    text = render(doc, "incrimination")
    for c in doc.claims:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{c.id}` |"))
        assert row.endswith("| check of our code |" if c.kind_at(c.scale) == "code_check" else "| substitute |"), row
    assert "5 check of our code" in text and "3 substitute" in text
    for s in {s for c in doc.claims for s in c.substitutes}:
        assert f"| {s.paper} | {s.here} |" in text


def test_update_inserts_before_the_verdicts_section_once_then_replaces_in_place():
    page = "# p\n\n## Choices\n\ntext\n\n## What its verdicts mean\n\nmeaning\n"
    first = update(page, f"{BEGIN}\nA\n{END}")
    assert first.index("A") < first.index("## What its verdicts mean") and first.count(BEGIN) == 1
    second = update(first, f"{BEGIN}\nB\n{END}")
    assert "A" not in second.replace("## What", "") and second.count(BEGIN) == 1 and second.endswith("meaning\n")
    with pytest.raises(ValueError, match="no '## What its verdicts mean'"):
        update("# p\n", f"{BEGIN}\nA\n{END}")
