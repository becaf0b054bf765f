"""Every file a job leaves under results/ and reports/ is a declared output, or lies in a declared output folder.

A file that no rule declares is invisible to Snakemake: it is never removed when its job fails, never
rebuilt when its inputs change, and can be read by a later run as if it were current (the way
evalmeta's LoRA resumed from checkpoints of another configuration). The check compares what the
session's smoke builds left in ``smoke_dir`` with the outputs Snakemake declares for the whole
workflow (``snakemake --summary``: one DAG, no job run). Run after the papers' own smoke tests and the
artifact-evaluation build, it covers every paper they built; run alone, it builds cmcboot's smoke
targets first (the cheapest paper).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_snakemake

#: Files that lie outside every declared output on purpose, each with its reason.
UNDECLARED_ON_PURPOSE: dict[str, str] = {}

CMCBOOT = ["reports/cmcboot_fig1.pdf", "reports/cmcboot_table1.csv", "results/cmcboot/metrics.json"]


def declared_outputs(workdir: Path, *targets: str) -> set[str] | None:
    """The outputs Snakemake declares for ``targets`` (rule all's without), as paths relative to ``workdir``;
    None if some target is no rule's output."""
    proc = run_snakemake(workdir, "--summary", *targets, check=not targets)
    if proc.returncode != 0:
        return None
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    assert rows and rows[0][0] == "output_file", proc.stdout[:2000]
    return {row[0] for row in rows[1:] if row and row[0]}


def undeclared_files(workdir: Path, declared: set[str]) -> list[str]:
    """Files under results/ and reports/ of ``workdir`` that are neither declared nor inside a declared folder."""
    folders = [Path(d) for d in declared if (workdir / d).is_dir()]
    found = []
    for top in ("results", "reports"):
        for path in sorted((workdir / top).rglob("*")):
            rel = path.relative_to(workdir)
            if path.is_dir() or str(rel) in declared or any(folder in rel.parents for folder in folders):
                continue
            found.append(str(rel))
    return found


def test_undeclared_files_are_found_beside_declared_ones(tmp_path):
    (tmp_path / "results/p/run").mkdir(parents=True)
    for rel in (
        "results/p/metrics.json",
        "results/p/run/a.pt",
        "results/p/run/sub/b.pt",
        "results/p/stray.pt",
        "reports/p_fig1.pdf",
        "reports/p_fig1.csv",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    declared = {
        "results/p/metrics.json",
        "results/p/run",
        "reports/p_fig1.pdf",
        "reports/p_fig1.csv",
        "results/p/never_built.json",
    }
    assert undeclared_files(tmp_path, declared) == ["results/p/stray.pt"]


@pytest.mark.slow
def test_every_file_the_smoke_builds_wrote_is_a_declared_output(smoke_dir):
    if not (smoke_dir / "results").is_dir():
        run_snakemake(smoke_dir, *CMCBOOT)
    built = sorted(p.name for p in (smoke_dir / "results").iterdir() if p.is_dir())
    assert built, "no paper built"
    undeclared = [f for f in undeclared_files(smoke_dir, declared_outputs(smoke_dir)) if f not in UNDECLARED_ON_PURPOSE]
    # a test may have built a target that rule all does not ask for: one more DAG over what is left
    if undeclared and declared_outputs(smoke_dir, *undeclared) is not None:
        undeclared = []
    assert not undeclared, (
        f"{len(undeclared)} files under results/ or reports/ that no rule declares "
        f"(papers built: {', '.join(built)}):\n" + "\n".join(undeclared[:60])
    )
