"""Faults injected into the jobs of a built workflow: a full disk, a job killed mid-run, a corrupted input.

One paper's smoke DAG holds every rule type the sample needs (grokcap: a data job writing an ``.npz``,
training jobs reading it, an aggregate reading their JSON, figures reading its CSV tables), and the
session has built it already (tests/grokcap): the module copies that build and forces one job at a
time, so it adds no build of a whole paper. Each fault must end in a clear error naming the file (or,
for a kill, in nothing under the output's name), leave nothing partial under a final name, and the
next run must rebuild exactly what the first build made.

A full disk is a file-size limit (``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored so that a write past it
fails with ``EFBIG`` as a full disk fails with ``ENOSPC``), set on Snakemake and inherited by its jobs.
"""

from __future__ import annotations

import csv
import os
import resource
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import comparable_outputs, run_snakemake, snakemake_cmd

TARGETS = ["reports/grokcap_fig1.pdf", "results/grokcap/metrics.json"]
DATA = "results/grokcap/data/seed0.npz"
RUN = "results/grokcap/runs/modular/w16_s0.json"  # the largest smoke model: the longest training job
COMPARED = [DATA, RUN, "results/grokcap/metrics.json", "reports/grokcap_fig1.pdf", "reports/grokcap_fig1.csv"]
ENV = {**os.environ, "REPRO_NO_PROGRESS": "1", "REPRO_FIGURE_LINT": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _leftovers(workdir: Path) -> list[str]:
    """Temporary files of atomic writes still lying under results/ or reports/."""
    return sorted(str(p.relative_to(workdir)) for d in ("results", "reports") for p in (workdir / d).rglob(".*.tmp*"))


@pytest.fixture(scope="module")
def built(smoke_dir, tmp_path_factory):
    """A copy of the session's grokcap smoke build (built here only when this module runs alone)."""
    run_snakemake(smoke_dir, *TARGETS)  # a no-op after tests/grokcap
    work = tmp_path_factory.mktemp("faults")
    for rel in ("results/grokcap", "logs/grokcap", "benchmarks/grokcap", ".snakemake/metadata"):
        if (smoke_dir / rel).exists():
            shutil.copytree(smoke_dir / rel, work / rel, symlinks=True)
    for pdf in (smoke_dir / "reports").glob("grokcap_*"):
        (work / "reports").mkdir(exist_ok=True)
        shutil.copy2(pdf, work / "reports" / pdf.name)
    return work, smoke_dir, comparable_outputs(smoke_dir, COMPARED)


def _job_pids(group: int, script: str) -> list[int]:
    """The processes of Snakemake's process group ``group`` that run the job script named ``script``
    (Snakemake runs ``.snakemake/scripts/tmp<random>.<script>``)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == group and f".{script}" in (entry / "cmdline").read_text(
                    errors="replace"
                ):
                    pids.append(int(entry.name))
            except OSError:  # gone meanwhile
                continue
    return pids


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run_with(workdir: Path, script: str, on_job, *args: str) -> tuple[int, str]:
    """Run Snakemake on ``args`` (targets before ``--forcerun``, which takes every word after it); while it runs, call ``on_job(pid)`` on each process of the job script
    ``script`` until one call returns True. Returns the exit status and the output."""
    out = workdir / "snakemake.out"
    with open(out, "w") as fh:
        proc = subprocess.Popen(
            snakemake_cmd(workdir, *args, cores=1), env=ENV, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline, done = time.monotonic() + 300, False
    try:
        while proc.poll() is None and time.monotonic() < deadline and not done:
            for pid in _job_pids(proc.pid, script):
                try:
                    done = done or bool(on_job(pid))
                except OSError:  # the job ended meanwhile
                    pass
            time.sleep(0.005)
        if done:
            proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out.read_text()


def _full_disk(limit: int):
    """A file-size limit of ``limit`` bytes on the job alone (Snakemake's own files, such as the job
    script it writes first, are larger): a write past it fails with EFBIG (Python ignores SIGXFSZ)."""

    def apply(pid: int) -> bool:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, resource.prlimit(pid, resource.RLIMIT_FSIZE)[1]))
        return False

    return apply


@pytest.mark.slow
def test_faults_in_a_data_job_a_training_job_an_aggregate_and_a_figure(built):
    work, source, reference = built
    sizes = {rel: (work / rel).stat().st_size for rel in COMPARED}

    # 1. data job, full disk: the .npz it writes is named, nothing stays under its name
    rc, out = _run_with(work, "data.py", _full_disk(sizes[DATA] // 2), DATA, "--forcerun", "grokcap_data")
    assert rc != 0 and f"{DATA}: file size limit exceeded while writing it" in out, out[-4000:]
    assert not (work / DATA).exists() and _leftovers(work) == []
    (work / DATA).parent.mkdir(exist_ok=True)  # Snakemake removed the folder it left empty
    shutil.copy2(source / DATA, work / DATA)  # put it back as built (its time too: nothing after it reruns)

    # 2. figure, full disk (a full reports/): the PDF is named, never matplotlib's own error
    pdf = "reports/grokcap_fig1.pdf"
    rc, out = _run_with(work, "fig1.py", _full_disk(sizes[pdf] // 2), pdf, "--forcerun", "grokcap_fig1")
    assert rc != 0 and f"{pdf}: file size limit exceeded while writing it" in out, out[-4000:]
    assert "AttributeError" not in out and "zlib.error: " not in out, out[-4000:]
    assert not (work / pdf).exists() and not (work / pdf).with_suffix(".csv").exists()
    assert _leftovers(work) == []

    # 3. figure, corrupted input: the aggregate's table cut inside a row (pandas alone would draw it, NaN and a
    # number cut short) is named, and the figure is not written
    table = work / "results/grokcap/runs.csv"
    raw = table.read_bytes()
    table.write_bytes(raw[: raw.rindex(b",", 0, len(raw) - 2)])
    failed = run_snakemake(work, pdf, check=False)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0 and f"{table.relative_to(work)}: a truncated CSV table" in out, out[-4000:]
    assert "delete it to rebuild" in out and not (work / pdf).exists() and _leftovers(work) == []
    shutil.copy2(source / "results/grokcap/runs.csv", table)  # put it back as built

    # 4. aggregate, corrupted input: a truncated run record is named, with how to rebuild it
    other = work / "results/grokcap/runs/random/w8_s0.json"
    other.write_text(other.read_text()[:40])
    failed = run_snakemake(work, "results/grokcap/metrics.json", check=False)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0 and f"{other.relative_to(work)}: not valid JSON" in out, out[-4000:]
    assert "delete it to rebuild" in out and not (work / "results/grokcap/metrics.json").exists()
    other.unlink()

    # 5. training job, killed (SIGKILL, as the OOM killer does) half way through its CPU time in the first build
    with open(work / "benchmarks/grokcap/train/modular/w16_s0.tsv", newline="") as fh:
        cpu = float(next(csv.DictReader(fh, delimiter="\t"))["cpu_time"])
    killed = []

    def kill_half_way(pid: int) -> bool:
        if _cpu_seconds(pid) < cpu / 2:
            return False
        os.killpg(os.getpgid(pid), signal.SIGKILL)  # the job with Snakemake, as a node failure would
        killed.append(pid)
        return True

    _run_with(work, "train.py", kill_half_way, RUN, "--forcerun", "grokcap_train")
    assert killed, "the training job ended before it could be killed"
    assert not (work / RUN).exists(), "a killed training job left its output"

    # the next run (after --unlock, what a user runs after a crash) rebuilds every output as first built
    run_snakemake(work, "--unlock")
    run_snakemake(work, *TARGETS)
    assert comparable_outputs(work, COMPARED) == reference
    assert _leftovers(work) == []
