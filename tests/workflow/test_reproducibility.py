"""Same config, same numbers and same PDF bytes; a SIGKILLed run resumes to identical outputs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import comparable_outputs, run_snakemake, snakemake_cmd

# cmcboot is the first paper through the skeleton; its smoke DAG is small but has jobs that
# run for seconds, so a kill lands in the middle of one.
TARGETS = ["reports/cmcboot_fig1.pdf", "reports/cmcboot_table1.csv", "results/cmcboot/metrics.json"]
COMPARED = ["results/cmcboot/metrics.json", "reports/cmcboot_fig1.pdf", "reports/cmcboot_fig1.csv",
            "reports/cmcboot_table1.csv", "results/cmcboot/coverage_long.csv"]


def _leftovers(workdir: Path) -> list[str]:
    """Temporary files of atomic writes, or Snakemake's incomplete markers, still lying around."""
    stale = [str(p.relative_to(workdir)) for d in ("results", "reports") for p in (workdir / d).rglob(".*.tmp*")]
    incomplete = workdir / ".snakemake" / "incomplete"
    if incomplete.exists():
        stale += [str(p) for p in incomplete.iterdir()]
    return stale


@pytest.fixture(scope="module")
def reference(smoke_dir):
    run_snakemake(smoke_dir, *TARGETS)
    return comparable_outputs(smoke_dir, COMPARED)


@pytest.mark.slow
def test_rebuilding_gives_identical_metrics_and_pdf_bytes(smoke_dir, reference):
    run_snakemake(smoke_dir, *TARGETS, "--forcerun", "cmcboot_aggregate")
    again = comparable_outputs(smoke_dir, COMPARED)
    for rel in COMPARED:
        assert again[rel] == reference[rel], f"{rel} differs between two builds"


@pytest.mark.slow
def test_sigkill_mid_job_then_rerun_incomplete_gives_the_same_outputs(tmp_path, reference):
    env = {**os.environ, "REPRO_NO_PROGRESS": "1"}
    proc = subprocess.Popen(snakemake_cmd(tmp_path, *TARGETS, cores=1), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    logs = tmp_path / "logs" / "cmcboot" / "intervals"
    deadline = time.monotonic() + 300
    try:
        # wait until a bootstrap job is running: its log exists and its output does not yet
        while time.monotonic() < deadline:
            running = [p for p in logs.rglob("*.log")] if logs.exists() else []
            pending = [p for p in running if not (tmp_path / "results/cmcboot/chunks" /
                                                  p.relative_to(logs).with_suffix(".json")).exists()]
            if pending:
                break
            assert proc.poll() is None, "the run finished before it could be killed"
            time.sleep(0.2)
        else:
            pytest.fail("no bootstrap job started within 300 s")
        time.sleep(1.0)  # well inside the job (each runs for several seconds at smoke scale)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not (tmp_path / "results/cmcboot/metrics.json").exists()
    # Snakemake's lock survives a SIGKILL; --unlock is what a user runs after a crash
    run_snakemake(tmp_path, "--unlock")
    run_snakemake(tmp_path, *TARGETS)
    assert comparable_outputs(tmp_path, COMPARED) == reference
    assert _leftovers(tmp_path) == []


@pytest.mark.slow
def test_snakemake_html_report_holds_the_registered_figures(smoke_dir, reference):
    run_snakemake(smoke_dir, "reports/cmcboot_fig2.pdf")
    report = smoke_dir / "reports" / "report.html"
    run_snakemake(smoke_dir, "--report", str(report), "reports/cmcboot_fig1.pdf", "reports/cmcboot_fig2.pdf")
    html = report.read_text(errors="replace")
    assert "cmcboot_fig1.pdf" in html and "cmcboot_fig2.pdf" in html


@pytest.mark.slow
def test_a_failed_aggregate_makes_the_figure_command_rebuild_it(tmp_path):
    """Snakemake removes the outputs of a failed job but records its metadata, and never reruns a job
    only because an input it read has gone: after cmcboot's aggregate failed, the figure command must
    rerun it (and fail again while its input is bad), never report "Nothing to be done" over a figure
    from the old aggregate."""
    fig, metrics = tmp_path / "reports/cmcboot_fig1.pdf", tmp_path / "results/cmcboot/metrics.json"
    run_snakemake(tmp_path, "reports/cmcboot_fig1.pdf")
    plotted = (tmp_path / "reports/cmcboot_fig1.csv").read_bytes()
    chunk = sorted((tmp_path / "results/cmcboot/chunks").rglob("chunk*.json"))[0]
    chunk.write_text(chunk.read_text()[:100])  # a corrupt chunk: the aggregate fails on it
    failed = run_snakemake(tmp_path, "reports/cmcboot_fig1.pdf", check=False)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0 and "cmcboot_aggregate" in out
    assert f"{chunk.relative_to(tmp_path)}: not valid JSON" in out, out[-3000:]  # the damaged chunk is named
    assert fig.exists() and not metrics.exists()  # what the probe found: a figure from the old aggregate
    again = run_snakemake(tmp_path, "reports/cmcboot_fig1.pdf", check=False)
    out = again.stdout + again.stderr
    assert "Nothing to be done" not in out, out[-3000:]
    assert again.returncode != 0 and "Error in rule cmcboot_aggregate" in out, out[-3000:]
    chunk.unlink()  # the chunk's job rebuilds it; then the aggregate and the figure
    run_snakemake(tmp_path, "reports/cmcboot_fig1.pdf")
    assert metrics.exists() and (tmp_path / "reports/cmcboot_fig1.csv").read_bytes() == plotted
