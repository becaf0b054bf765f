"""Every figure the smoke builds drew has the caption its intervals need.

A figure that draws error bars or bands (recorded in its PDF by :func:`repro.figures.style.save`) has
a caption sentence beginning ``Error bars:`` or ``Bands:`` that says what they are and over which
units; a figure that draws none has no such sentence (:func:`repro.figures.lint.check_captions`).
The caption is the one each figure's rule attaches (``figure(key, name)`` in the rules' common file:
``workflow/report/<key>_<name>.rst``). Runs in the session's shared ``smoke_dir`` after the papers'
own smoke tests and the artifact-evaluation build, over every figure they built; run alone, it builds
cmcboot's figures first (the cheapest paper).
"""

from __future__ import annotations

import re

import pytest

from conftest import REPO, run_snakemake
from repro.figures.lint import check_captions

CMCBOOT = ["reports/cmcboot_fig1.pdf", "reports/cmcboot_fig2.pdf"]


def test_every_figure_rule_takes_its_caption_from_the_report_folder_by_stem():
    common = (REPO / "workflow/rules/common.smk").read_text()
    assert 'caption=f"../report/{key}_{name}.rst"' in common
    for rules in (REPO / "workflow/rules").glob("*.smk"):
        if rules.name != "common.smk":
            assert not re.search(r"\breport\(", rules.read_text()), f"{rules.name} attaches a caption by itself"


@pytest.mark.slow
def test_every_built_figure_says_what_its_error_bars_are(smoke_dir):
    if not list((smoke_dir / "reports").glob("*.pdf")):
        run_snakemake(smoke_dir, *CMCBOOT)
    figures = sorted(p.name for p in (smoke_dir / "reports").glob("*.pdf"))
    assert figures, "no figure built"
    problems = check_captions(smoke_dir / "reports", REPO / "workflow/report")
    assert not problems, f"{len(problems)} of {len(figures)} figures:\n" + "\n".join(map(str, problems))
