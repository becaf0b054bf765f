"""The HTML artifact-evaluation report as a reader sees it: rendered by a real headless browser.

A test figure drawn in a colour nothing else on the page uses (magenta) must show up in the
screenshot, which proves that the embedded figure image loaded and rendered; the overview's PASS
and FAIL colours must show up too, which proves the verdict figure rendered.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from repro.aereport import VERDICT_COLORS, collect, load_papers, render_html
from repro.claims import FAIL, PASS, sample
from repro.io import write_json
from tests.conftest import REPO

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
MAGENTA = (255, 0, 255)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def _pixels_near(image: np.ndarray, rgb: tuple[int, int, int], tol: int = 12) -> int:
    return int((np.abs(image[..., :3].astype(int) - np.array(rgb)).max(axis=-1) <= tol).sum())


@pytest.fixture
def report(tmp_path):
    import matplotlib.pyplot as plt
    import pandas as pd
    import yaml

    from repro.figures.style import save

    claims = {"paper": "demo", "title": "Demo", "rebuild": "A demo.", "kind": "reproduction",
              "kind_reason": "the demo's own experiment", "claims": [
        {"id": "wins", "claim": "ours > 0", "source": "abstract", "metric": "gain",
         "check": {"op": ">", "rhs": 0, "unit": "seed"}, "scale": "smoke"},
        {"id": "loses", "claim": "ours < 0", "source": "Table 1", "metric": "gain",
         "check": {"op": "<", "rhs": 0, "unit": "seed"}, "scale": "smoke", "kind": "substitute",
         "kind_reason": "a small model stands in", "substitutes": [{"paper": "a 49B model", "here": "a 135M model"}]},
        {"id": "planted", "claim": "the testbed plants it", "source": "ours", "metric": "gain",
         "check": {"op": ">", "rhs": 0, "unit": "seed"}, "scale": "smoke", "kind": "code_check",
         "kind_reason": "true by the generator"}]}
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims/demo.yaml").write_text(yaml.safe_dump(claims))
    write_json(tmp_path / "results/demo/metrics.json",
               {"gain": sample(np.linspace(1, 2, 8), range(8), "seed"), "provenance": {"scale": "smoke"}})
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.fill_between([0, 1], [0, 0], [1, 1], color="#FF00FF")
    save(fig, pd.DataFrame({"x": [0, 1]}), tmp_path / "reports/demo_fig1.pdf")
    papers = load_papers(REPO / "workflow/papers.yaml")[:2] + [{"number": 20, "key": "demo", "title": "Demo"}]
    entries = collect(papers, built={"demo": ["reports/demo_fig1.pdf", "results/demo/metrics.json"]},
                      claims_dir=tmp_path / "claims", schema_path=REPO / "workflow/schemas/claims.schema.yaml",
                      results_dir=tmp_path / "results", benchmarks_dir=tmp_path / "benchmarks")
    assert [r.status for r in entries[-1].results] == [PASS, FAIL, PASS]
    page = tmp_path / "reports/artifact_evaluation.html"
    page.write_text(render_html(entries, scale="smoke", reports_dir=tmp_path / "reports"))
    return page


def test_the_page_links_each_figure_to_its_pdf_and_csv(report):
    text = report.read_text()
    assert "href='demo_fig1.pdf'" in text and "href='demo_fig1.csv'" in text
    assert "data:image/png;base64," in text and "<svg" in text


def test_the_overview_counts_each_kind_in_its_own_panel_and_rows_carry_their_kind(report):
    """One panel per kind: the reproduction's PASS, the substitute's FAIL and the code check's PASS are
    three bars, never one; a substitute's FAIL says it is not a refutation; the section opens with the rebuild."""
    text = report.read_text()
    svg = text.split("<figure id='overview'>")[1].split("</figure>")[0]
    for heading in ("reproduction", "substitute", "code checks", "NOT RUN"):
        assert f"font-weight='bold'>{heading}</text>" in svg
    assert "<title>demo, reproduction: 1 PASS</title>" in svg and "<title>demo, substitute: 1 FAIL</title>" in svg
    assert "<title>demo, code checks: 1 PASS</title>" in svg
    assert "<b>FAIL</b> (not reproduced with these substitutes)" in text and "<li>a 135M model <i>in place of</i> a 49B model</li>" in text
    assert "<b>PASS</b> (code check)" in text and "What this rebuild is: A demo." in text


@pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium (apt-get install chromium; .ci/run installs it)")
def test_a_headless_browser_renders_the_overview_and_the_figures(report, tmp_path):
    from PIL import Image

    shot = tmp_path / "shot.png"
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--allow-file-access-from-files", "--window-size=1280,2400",
                           f"--screenshot={shot}", report.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists(), proc.stderr[-2000:]
    image = np.asarray(Image.open(shot).convert("RGB"))
    assert image.shape[0] >= 2000 and image.std() > 5  # something was drawn, not a blank page
    assert _pixels_near(image, MAGENTA) > 2000, "the figure image did not load or render"
    assert _pixels_near(image, _rgb(VERDICT_COLORS[PASS])) > 50, "the overview figure did not render"
    assert _pixels_near(image, _rgb(VERDICT_COLORS[FAIL])) > 50
