"""Cluster execution: the SLURM and cluster-generic profiles, dry-run at paper scale, and a live run
through a private single-node SLURM (tests/workflow/slurm_harness.py) that the tests start and stop.

The live tests (marked ``slurm``) need root and the slurm-wlm + munge packages; with CI=true (or
REPRO_SLURM_INSTALL=1) they apt-get install them when missing. Elsewhere they skip, saying why.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, run_snakemake
from tests.workflow import slurm_harness
from tests.workflow.slurm_harness import SingleNodeSlurm, unavailable_reason

HERE = Path(__file__).resolve().parent
SLURM_PROFILE = REPO / "profiles" / "slurm"
GENERIC_PROFILE = REPO / "profiles" / "cluster-generic"
TEST_PROFILE = HERE / "slurm_profile"  # partition, squeue status, short first poll for the private cluster
FAULTS = HERE / "cluster_faults" / "Snakefile"
#: A small multi-rule DAG of a real paper at scale=smoke, run locally and through SLURM: cmcboot cut to
#: one setting and two methods (tests/workflow/slurm_cmcboot.yaml), truth -> intervals x2 -> aggregate
#: -> fig1 + table1, 6 jobs.
SMOKE_TARGETS = ["reports/cmcboot_fig1.pdf", "reports/cmcboot_table1.md"]
SMOKE_CONFIG = ["--configfile", str(REPO / "config.yaml"), str(HERE / "slurm_cmcboot.yaml")]


def profile_retries(profile: Path) -> int:
    return yaml.safe_load((profile / "config.yaml").read_text())["retries"]


def snakemake_cluster(workdir: Path, *args: str, profiles=(SLURM_PROFILE, TEST_PROFILE), env=None,
                      snakefile: Path = REPO / "Snakefile", timeout: float = 600) -> subprocess.CompletedProcess:
    """snakemake with cluster profiles, run from the checkout (so profiles/default applies, as for a user)."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(snakefile), "--directory", str(workdir),
           *[f"--profile={p}" for p in profiles], *args]
    if snakefile == REPO / "Snakefile" and "--configfile" not in args:
        cmd += ["--configfile", str(REPO / "config.yaml")]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**(env or os.environ), "REPRO_NO_PROGRESS": "1"})


def comparable(path: Path):
    """What must agree between a local and a SLURM build: the bytes, less what records the run itself
    (provenance blocks: wall time, host; the AE report's runtime summed from benchmarks)."""
    if path.suffix == ".json":
        def strip(node):
            if isinstance(node, dict):
                return {k: strip(v) for k, v in node.items() if k != "provenance"}
            return [strip(v) for v in node] if isinstance(node, list) else node
        return strip(json.loads(path.read_text()))
    if path.suffix in (".md", ".html"):
        return re.sub(r"\d+ s over \d+ jobs", "<runtime>", path.read_text())
    return path.read_bytes()


def built_files(workdir: Path) -> list[Path]:
    return sorted(p.relative_to(workdir) for d in ("results", "reports") if (workdir / d).is_dir()
                  for p in (workdir / d).rglob("*") if p.is_file())


# -- the profiles, without daemons -------------------------------------------------------------------

def test_cluster_profiles_beat_nothing_of_profiles_default_that_matters(monkeypatch):
    """profiles/default is the workflow profile: Snakemake applies it on top of every --profile, key by
    key. Cluster keys (latency-wait, keep-going, jobs, retries) must therefore come from the cluster
    profile, and a later --profile layer replaces whole keys of an earlier one."""
    from snakemake.cli import parse_args

    monkeypatch.chdir(REPO)
    _, args = parse_args(["-n", "--profile", str(SLURM_PROFILE)])
    slurm = yaml.safe_load((SLURM_PROFILE / "config.yaml").read_text())
    assert args.executor == "slurm"
    assert (args.latency_wait, args.keep_going, args.jobs, args.retries) == (
        slurm["latency-wait"], slurm["keep-going"], slurm["jobs"], slurm["retries"])
    assert args.rerun_incomplete and args.show_failed_logs  # from both
    assert "slurm_partition" not in args.default_resources  # a placeholder until the user sets it

    _, args = parse_args(["-n", "--profile", str(SLURM_PROFILE), "--profile", str(TEST_PROFILE)])
    assert args.latency_wait == 5 and args.slurm_status_command == "squeue"
    assert args.default_resources["slurm_partition"].raw == "debug"
    assert args.retries == slurm["retries"]  # keys the later layer leaves alone pass through

    _, args = parse_args(["-n", "--profile", str(GENERIC_PROFILE)])
    assert args.executor == "cluster-generic"
    assert Path(args.cluster_generic_status_cmd) == GENERIC_PROFILE / "status.py"  # resolved in the profile


@pytest.mark.parametrize("profile", [SLURM_PROFILE, GENERIC_PROFILE], ids=["slurm", "cluster-generic"])
def test_dry_run_of_every_target_at_paper_scale(tmp_path, profile):
    proc = snakemake_cluster(tmp_path, "-n", "--config", "scale=paper", profiles=(profile,))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "artifact_evaluation" in out
    # every job that would be submitted states its memory and wall time
    jobs = re.findall(r"^rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", out, flags=re.M)
    assert jobs
    missing = [rule for rule, res in jobs if rule != "all" and not ("mem_mb=" in res and "runtime=" in res)]
    assert not missing, f"jobs without mem_mb/runtime: {missing}"


# -- the cluster-generic status script -----------------------------------------------------------------

@pytest.fixture(scope="module")
def status_script():
    spec = importlib.util.spec_from_file_location("generic_status", GENERIC_PROFILE / "status.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("state,expected", [
    ("PENDING", "running"), ("RUNNING", "running"), ("COMPLETING", "running"), ("REQUEUED", "running"),
    ("COMPLETED", "success"), ("FAILED", "failed"), ("CANCELLED by 1000", "failed"), ("CANCELLED+", "failed"),
    ("TIMEOUT", "failed"), ("OUT_OF_MEMORY", "failed"), ("NODE_FAIL", "failed"), ("PREEMPTED", "failed"),
])
def test_status_maps_slurm_states(status_script, state, expected):
    assert status_script.status_of(state) == expected


def test_status_rejects_unknown_states(status_script):
    with pytest.raises(ValueError, match="WIBBLE"):
        status_script.status_of("WIBBLE")


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


@pytest.mark.parametrize("sacct,squeue,expected", [
    ('echo COMPLETED', 'echo RUNNING', "success"),       # sacct answers first
    ('echo "sacct: error: Slurm accounting storage is disabled" >&2; exit 1', 'echo FAILED', "failed"),
    ('exit 0', 'echo PENDING', "running"),               # sacct up but the job not recorded yet
])
def test_status_script_asks_sacct_then_squeue(tmp_path, sacct, squeue, expected):
    _fake(tmp_path, "sacct", sacct)
    _fake(tmp_path, "squeue", squeue)
    out = subprocess.run([sys.executable, str(GENERIC_PROFILE / "status.py"), "42;cluster"], capture_output=True,
                         text=True, env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}, timeout=60)
    assert out.returncode == 0 and out.stdout == f"{expected}\n", out.stderr


# -- when the live tests run ---------------------------------------------------------------------------

def test_harness_skips_without_root(monkeypatch):
    monkeypatch.setattr(slurm_harness.os, "geteuid", lambda: 1000)
    assert "needs root" in unavailable_reason()


def test_harness_installs_only_where_allowed(monkeypatch):
    installed = []
    monkeypatch.setattr(slurm_harness.os, "geteuid", lambda: 0)
    monkeypatch.setattr(slurm_harness, "install", lambda: installed.append(True))
    monkeypatch.setattr(slurm_harness.shutil, "which",
                        lambda name: None if name in ("slurmd", "sbatch") else f"/usr/bin/{name}")
    for var in slurm_harness.INSTALL_ENV:
        monkeypatch.delenv(var, raising=False)
    reason = unavailable_reason()
    assert "['slurmd', 'sbatch'] missing" in reason and "CI=true" in reason and not installed
    monkeypatch.setenv("CI", "true")
    reason = unavailable_reason()  # installs, but the fake install leaves the binaries missing
    assert installed and "still missing after apt-get install" in reason


# -- live: a private single-node SLURM ---------------------------------------------------------------

@pytest.fixture(scope="module")
def slurm():
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"no private SLURM on this machine: {reason}")
    # not pytest's tmp_path: user munge must reach the socket folder, and pytest's base is root-only
    root = Path(tempfile.mkdtemp(prefix="repro-slurm-"))
    cluster = SingleNodeSlurm(root).start()
    pids = [p.pid for p in cluster.procs.values()]
    try:
        yield cluster
    finally:
        cluster.stop()
        for pid in pids:  # exactly the daemons started here are gone
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        shutil.rmtree(root, ignore_errors=True)


def slurm_jobs(cluster: SingleNodeSlurm) -> dict[str, str]:
    """SLURM job id -> final state, for every job this private cluster has seen (MinJobAge=300 s)."""
    out = subprocess.run(["squeue", "--states=all", "--noheader", "--format=%i %T"], capture_output=True,
                         text=True, env=cluster.env(), check=True).stdout
    return dict(line.split() for line in out.splitlines() if line.strip())


@pytest.mark.slurm
@pytest.mark.slow
def test_planted_failure_is_retried_then_reported(slurm, tmp_path):
    retries = profile_retries(SLURM_PROFILE)
    proc = snakemake_cluster(tmp_path, env=slurm.env(), snakefile=FAULTS)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]

    # `flaky` failed once and its retry, a new SLURM job, succeeded
    flaky = [line.split() for line in (tmp_path / "attempts_flaky.txt").read_text().splitlines()]
    assert [a for a, _ in flaky] == ["1", "2"], out[-3000:]
    assert flaky[0][1] != flaky[1][1] and all(j.isdigit() for _, j in flaky)
    assert (tmp_path / "flaky.txt").read_text() == "ok on attempt 2\n"

    # `broken` ran 1 + retries times, each a SLURM job that ended FAILED, then was reported
    broken = [line.split() for line in (tmp_path / "attempts_broken.txt").read_text().splitlines()]
    assert [int(a) for a, _ in broken] == list(range(1, retries + 2))
    states = slurm_jobs(slurm)
    assert [states[j] for _, j in broken] == ["FAILED"] * (retries + 1)
    assert [states[j] for _, j in flaky] == ["FAILED", "COMPLETED"]
    assert not (tmp_path / "broken.txt").exists()
    assert out.count("Trying to restart job") == 2  # one retry each for flaky and broken
    assert "Error in rule broken" in out and f"SLURM-job '{broken[-1][1]}' failed" in out
    # the report points at the SLURM log of the failed job, which is kept and holds the cause
    log = tmp_path / f".snakemake/slurm_logs/rule_broken/{broken[-1][1]}.log"
    assert str(log) in out
    assert "returned non-zero exit status 3" in log.read_text()


@pytest.mark.slurm
@pytest.mark.slow
def test_smoke_dag_through_slurm_equals_local_run(slurm, tmp_path):
    local, cluster = tmp_path / "local", tmp_path / "slurm"
    start = time.monotonic()
    run_snakemake(local, *SMOKE_TARGETS, *SMOKE_CONFIG)
    local_s = time.monotonic() - start

    before = set(slurm_jobs(slurm))
    start = time.monotonic()
    proc = snakemake_cluster(cluster, *SMOKE_TARGETS, "--config", "scale=smoke", *SMOKE_CONFIG, env=slurm.env())
    slurm_s = time.monotonic() - start
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:] + "\n" + slurm.logs()

    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", out)
    local_jobs = len(list((local / "benchmarks").rglob("*.tsv")))  # one benchmark file per job
    states = slurm_jobs(slurm)
    assert len(submitted) == local_jobs and set(submitted) == set(states) - before
    assert {states[j] for j in submitted} == {"COMPLETED"}
    print(f"\nsmoke DAG {SMOKE_TARGETS}: local {local_s:.1f} s, SLURM {slurm_s:.1f} s, "
          f"{len(submitted)} SLURM jobs")

    files = built_files(local)
    assert files and files == built_files(cluster)
    differ = [str(f) for f in files if comparable(local / f) != comparable(cluster / f)]
    assert not differ, f"SLURM and local builds differ in {differ}"


@pytest.mark.slurm
@pytest.mark.slow
def test_cluster_generic_profile_retries_through_sbatch(slurm, tmp_path):
    """profiles/cluster-generic: plain sbatch + status.py (sacct fails here, squeue answers)."""
    proc = snakemake_cluster(tmp_path, "flaky.txt", "--latency-wait", "5", "--seconds-between-status-checks", "3",
                             env=slurm.env(), snakefile=FAULTS,
                             profiles=(GENERIC_PROFILE,))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    flaky = [line.split() for line in (tmp_path / "attempts_flaky.txt").read_text().splitlines()]
    assert [a for a, _ in flaky] == ["1", "2"] and flaky[0][1] != flaky[1][1]
    states = slurm_jobs(slurm)
    assert [states[j] for _, j in flaky] == ["FAILED", "COMPLETED"]
    assert (tmp_path / "flaky.txt").read_text() == "ok on attempt 2\n"
