"""The briefs: enough of them, machine-checkable, and read by the checker the way they were written."""

from __future__ import annotations

import pytest
import yaml

from repro.papers.driftbench.briefs import Brief, brief_text, load_briefs, parse_brief
from repro.papers.driftbench.scoring import check_proposal, decide


def test_at_least_twelve_briefs_from_several_domains_each_with_checks():
    briefs = load_briefs()
    assert len(briefs) >= 12
    assert len({b.domain for b in briefs}) >= 10
    for b in briefs:
        assert 5 <= len(b.hard_constraints) <= 8, b.id
        kinds = {c.kind for c in b.constraint_checks()}
        assert len(b.constraint_checks()) >= 3, b.id
        assert kinds & {"max", "min"} and "forbid" in kinds, b.id  # a number and a keyword per brief
        assert b.banned_checks(), b.id


@pytest.mark.parametrize("brief", load_briefs(), ids=lambda b: b.id)
def test_each_check_reads_its_comply_sentence_as_kept_and_its_violate_sentence_as_broken(brief):
    for chk in brief.checks:
        if chk.constraint is not None:
            assert decide(chk, chk.sentence(comply=True)) is False, (brief.id, chk.target)
        assert decide(chk, chk.sentence(comply=False)) is True, (brief.id, chk.target)
    # a proposal that keeps everything: no check is broken (no sentence breaks another check)
    keep = "\n".join(c.sentence(comply=True) for c in brief.constraint_checks())
    assert not any(check_proposal(keep, brief).values())
    # each violating sentence breaks its own check and no other
    for chk in brief.checks:
        text = keep + "\n" + chk.sentence(comply=False)
        if chk.numeric or chk.kind == "require":  # the kept sentence is replaced, not added to
            text = "\n".join(c.sentence(comply=c is not chk) for c in brief.constraint_checks())
        broken = {k for k, v in check_proposal(text, brief).items() if v}
        assert broken == {chk.target}, (brief.id, chk.target, broken)


def _doc():
    return yaml.safe_load("""
id: x
domain: d
objective: o
hard_constraints: [a, b]
success_criteria: [s]
plausible_directions: [p]
banned_moves: [m]
""")


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("banned_moves"), "missing key(s) banned_moves"),
    (lambda d: d.update(extra=1), "unknown key(s) extra"),
    (lambda d: d.update(checks=[{"kind": "forbid", "pattern": "x", "constraint": 5}]), "constraint 5 is not an index"),
    (lambda d: d.update(checks=[{"kind": "forbid", "pattern": "(", "constraint": 0}]), "bad pattern"),
    (lambda d: d.update(checks=[{"kind": "max", "pattern": "x", "constraint": 0, "limit": 3}]), "capture group"),
    (lambda d: d.update(checks=[{"kind": "often", "pattern": "x", "constraint": 0}]), "kind 'often'"),
    (lambda d: d.update(hard_constraints=[]), "hard_constraints must be a non-empty list"),
])
def test_a_malformed_brief_is_refused_naming_the_key(edit, message):
    doc = _doc()
    edit(doc)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_brief(doc)


def test_unknown_brief_ids_are_named():
    with pytest.raises(ValueError, match="unknown id"):
        load_briefs(ids=["agri_cover", "nope"])


def test_brief_is_rendered_as_the_reference_renders_it():
    """Worked by hand from the reference's render_brief_for_prompt: Domain, Objective, then each list
    under its title, items indented by two spaces, a blank line between sections; checks never shown."""
    brief = Brief(id="x", domain="ecology", objective="Test A.", hard_constraints=("c1", "c2"),
                  success_criteria=("s1",), plausible_directions=("d1",), banned_moves=("b1",))
    assert brief_text(brief) == ("Domain: ecology\nObjective: Test A.\n\nHard constraints:\n  - c1\n  - c2\n\n"
                                 "Success criteria:\n  - s1\n\nPlausible directions:\n  - d1\n\n"
                                 "Banned moves:\n  - b1")
    real = load_briefs()[0]
    assert brief_text(real).startswith(f"Domain: {real.domain}\nObjective: {real.objective}\n")
    assert not any(c.pattern in brief_text(real) for c in real.checks)
