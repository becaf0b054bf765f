"""A figure's PDF is the same bytes in every process (same inputs, same bytes), subfigures included.

The constrained layout's solver places panels to the last bits differently from one process to another (its order
of operations follows memory addresses); :func:`repro.figures.style.save` lays a figure out once and rounds the
layout (:func:`repro.figures.style.freeze_layout`) so that those bits never reach the PDF. Each figure here is
rendered in two Python processes with different ``PYTHONHASHSEED``, each drawing it several times with its heap in
another state (objects allocated in between, as a workflow script has after reading other inputs): every PDF must
be the same bytes. The figures: a synthetic one of two subfigures (panels, a super label, a subfigure's title, a
figure legend below), and immunize's Fig. 1 on its smoke-scale table (open-weights panels and relearning panels in
two subfigures).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import repro

SRC = Path(repro.__file__).resolve().parents[1]
REPO = Path(__file__).resolve().parents[2]

#: Draws each figure ``RENDERS`` times into ``<out>/<i>/<name>.pdf`` (the same file name: the PDF's title is its stem).
SCRIPT = """
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from repro.figures.style import legend, new_figure, panel_letters, save
from repro.papers.immunize.figures import fig1

out, renders = Path(sys.argv[1]), int(sys.argv[2])


def synthetic():
    fig = new_figure("text", height=3.2)
    top, bottom = fig.subfigures(2, 1, height_ratios=[2.0, 1.2])
    grid = top.subplots(2, 3, sharex=True, sharey=True)
    x = np.arange(1, 11)
    for k, ax in enumerate(grid.flat):
        ax.errorbar(x, np.sqrt(x) * (k + 1), yerr=0.1 * x, label=f"method {k % 3}")
        ax.set_title(f"setting {k}")
    top.supylabel("score (n = 3 seeds)")
    panels = bottom.subplots(1, 2)
    for k, ax in enumerate(panels):
        ax.plot(x, x / 10, label=f"method {k}")
        ax.set_xlabel("steps")
    bottom.suptitle("below")
    panel_letters([*grid.flat, *panels])
    legend(fig, where="below")
    return fig, pd.DataFrame({"x": x})


immunize = pd.read_csv(sys.argv[3])
heap = []
for i in range(renders):
    heap.append([object() for _ in range(997 * i)] + [bytearray(64 * i)])  # the heap in another state each time
    fig, table = synthetic()
    save(fig, table, out / str(i) / "synthetic.pdf")
    save(fig1(immunize), immunize, out / str(i) / "immunize_fig1.pdf")
"""

RENDERS = 3


def _render(out: Path, hash_seed: int) -> dict[str, set[str]]:
    """sha256 of each figure's PDFs drawn in one new process."""
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed),
           "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("REPRO_FIGURE_LINT", None)
    subprocess.run([sys.executable, "-c", SCRIPT, str(out), str(RENDERS),
                    str(REPO / "tests" / "data" / "figures" / "immunize_fig1.csv")],
                   env=env, check=True, capture_output=True, cwd=REPO)
    hashes: dict[str, set[str]] = {}
    for pdf in sorted(out.glob("*/*.pdf")):
        hashes.setdefault(pdf.stem, set()).add(hashlib.sha256(pdf.read_bytes()).hexdigest())
    return hashes


def test_figures_with_subfigures_are_the_same_bytes_in_every_process(tmp_path):
    first, second = _render(tmp_path / "a", 1), _render(tmp_path / "b", 2)
    assert sorted(first) == sorted(second) == ["immunize_fig1", "synthetic"]
    distinct = {name: len(first[name] | second[name]) for name in first}
    assert set(distinct.values()) == {1}, f"different PDFs of the same figure out of {2 * RENDERS} renders: {distinct}"
