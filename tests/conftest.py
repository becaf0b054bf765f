"""Shared fixtures: run the workflow in a scratch folder, find the shared fixtures, serve a folder over HTTP."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from repro.data.fixtures import serve_folder
from repro.jobs import limit_threads

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# Under pytest-xdist (pyproject's addopts: two workers) each worker computes on one thread: two
# workers each spinning two BLAS / OpenMP threads on two cores wait on each other's descheduled
# threads and run several times slower. A workflow test's jobs set their own thread counts.
if os.environ.get("PYTEST_XDIST_WORKER"):
    limit_threads(1)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """Every test that uses the session's shared smoke build runs on one worker (``--dist loadgroup``):
    the smoke DAGs are built once and the tests over the whole workflow (the AE report, the declared
    outputs, the fault injection) reuse them as in a serial run."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if "smoke_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("smoke_builds"))


def snakemake_cmd(workdir: Path, *args: str, scale: str = "smoke", config: dict | None = None,
                  cores: int = 2) -> list[str]:
    """The snakemake command line for a run of this repo's workflow in ``workdir``."""
    cfg = {"scale": scale, **(config or {})}
    return [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
            "--configfile", str(REPO / "config.yaml"), "--cores", str(cores), "--config",
            *[f"{k}={v}" for k, v in cfg.items()], "--rerun-incomplete", "--show-failed-logs", *args]


def run_snakemake(workdir: Path, *args: str, check: bool = True, timeout: float = 900, **kwargs) -> subprocess.CompletedProcess:
    """Run snakemake (``args`` are targets and flags); on failure show the end of its output."""
    # every figure the tests build must pass the figure lint (repro.figures.lint), checked in save()
    env = {**os.environ, "REPRO_NO_PROGRESS": "1", "REPRO_FIGURE_LINT": "1"}
    proc = subprocess.run(snakemake_cmd(workdir, *args, **kwargs), capture_output=True, text=True,
                          timeout=timeout, env=env)
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


def comparable_outputs(workdir: Path, rels: list[str]) -> dict[str, object]:
    """The files ``rels`` of a build in ``workdir`` as two builds are compared: JSON without the provenance
    keys that differ between identical runs (timings, dates), everything else as bytes."""
    import json

    from repro.provenance import strip_volatile

    return {rel: strip_volatile(json.loads((workdir / rel).read_text())) if rel.endswith(".json")
            else (workdir / rel).read_bytes() for rel in rels}


def job_counts(stdout: str) -> dict[str, int]:
    """Jobs per rule in the 'Job stats' table of a dry run's output."""
    table = stdout.split("Job stats:")[-1].split("\n\n")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M) if m.group(1) != "total"}


def scheduled_rules(stdout: str) -> set[str]:
    """Rule names in the 'Job stats' table of a dry run's output."""
    return set(job_counts(stdout))


@pytest.fixture
def workflow_run():
    """``workflow_run(workdir, *targets, scale="smoke", config={...})``."""
    return run_snakemake


def build_targets(workdir: Path, targets: list[str], **kwargs) -> None:
    """Build ``targets`` with :func:`run_snakemake` and check that each exists and is not empty."""
    run_snakemake(workdir, *targets, **kwargs)
    for target in targets:
        assert (workdir / target).stat().st_size > 0, target


@pytest.fixture
def workflow_build():
    """``workflow_build(workdir, targets, scale="smoke", ...)``: build and check every target is non-empty."""
    return build_targets


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the shared fixtures (real slides) come with the project's workspace only")
    return SHARED


@pytest.fixture(scope="session")
def smoke_dir(tmp_path_factory) -> Path:
    """One working directory shared by the whole session's smoke builds.

    Each paper's smoke test builds its own targets here from nothing; tests that need the whole
    workflow (the AE report, Snakemake's HTML report) then reuse what is already built instead of
    running every DAG twice.
    """
    return tmp_path_factory.mktemp("smoke")


@pytest.fixture
def served(tmp_path):
    """An empty folder served over HTTP on 127.0.0.1: ``(folder, base URL)``."""
    root = tmp_path / "www"
    root.mkdir()
    with serve_folder(root) as url:
        yield root, url
