"""repro.timedbuild measures a build's CPU time and memory including the processes it starts."""

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import repro
from repro import timedbuild
from repro.publish import _measured_text
from repro.io import read_json, write_json
from repro.timedbuild import FINISHED, build_paper, run_measured, touched_stages


def test_cost_counts_grandchildren_cpu_and_memory(tmp_path):
    # a child that starts a grandchild which spins ~0.6 CPU-s and holds ~300 MB: both must be counted
    grandchild = "import time; b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096]); t = time.process_time()\nwhile time.process_time() - t < 0.6: pass"
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {grandchild!r}], check=True); print('Finished jobid: 3 (Rule: fit)')"
    rc, used = run_measured([sys.executable, "-c", child], tmp_path / "logs/run.log")
    assert rc == 0
    assert used["cpu_s"] >= 0.6 and used["wall_s"] >= 0.6
    # Linux counts into a process's peak the memory of the process it was spawned from (up to its exec):
    # this test process's peak bounds that part
    own_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert 300 <= used["peak_rss_mb"] < 700 + own_mb
    assert FINISHED.findall((tmp_path / "logs/run.log").read_text()) == ["fit"]


def test_a_failing_command_reports_its_exit_status(tmp_path):
    rc, _ = run_measured([sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "run.log")
    assert rc == 3


def test_finished_lines_name_their_rules():
    log = textwrap.dedent("""\
        [Sun Dec  6 22:50:01 2026]
        Finished jobid: 12 (Rule: cmcboot_truth)
        1 of 3 steps (33%) done
        Finished jobid: 0 (Rule: paper_cmcboot)
        """)
    assert FINISHED.findall(log) == ["cmcboot_truth", "paper_cmcboot"]


def test_a_repeated_sigterm_still_records_the_sitting(tmp_path):
    # the build is stopped twice while its snakemake is still shutting down (spending CPU as it does):
    # the runner waits for it and reports what it spent instead of dying with nothing recorded
    ready = tmp_path / "ready"
    child = textwrap.dedent(f"""\
        import pathlib, signal, time
        def stop(*_):
            t = time.process_time()
            while time.process_time() - t < 0.5: pass
            raise SystemExit(1)
        signal.signal(signal.SIGTERM, stop)
        pathlib.Path({str(ready)!r}).touch()
        time.sleep(60)
        """)
    runner = textwrap.dedent(f"""\
        import json, signal, sys
        from pathlib import Path
        from repro.timedbuild import on_sigterm, run_measured
        signal.signal(signal.SIGTERM, on_sigterm)
        rc, used = run_measured([sys.executable, "-c", {child!r}], Path({str(tmp_path / "run.log")!r}))
        print(json.dumps({{"rc": rc, **used}}))
        """)
    env = {**os.environ, "PYTHONPATH": str(Path(repro.__file__).parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", runner], stdout=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    result = json.loads(out)
    assert result["rc"] == 130 and result["cpu_s"] >= 0.5


def test_a_stage_is_rebuilt_when_code_it_runs_changes_and_only_then():
    # the WSI stage's scripts import repro.data.fetch: a change there stales the stage's outputs, which Snakemake
    # does not see; a paper's module that merely has "wsi" in its path does not
    repo = Path(__file__).resolve().parents[2]
    assert touched_stages(["changed src/repro/data/fetch.py"], ["wsi"], repo) == ["wsi"]
    assert touched_stages(["changed src/repro/wsi/reader.py", "added workflow/scripts/llm/cache.py"],
                          ["wsi", "llm"], repo) == ["wsi", "llm"]
    assert touched_stages(["changed src/repro/papers/tmevolve/wsi.py", "changed docs/wsi.md"], ["wsi", "llm"], repo) == []


def _fake_snakemake(monkeypatch, seen: list):
    """build_paper without snakemake: the run writes one finished job to its log and sees costs.json."""
    monkeypatch.setattr(timedbuild, "fingerprint", lambda key, folder: {"f": "1"})
    monkeypatch.setattr(timedbuild, "git_commit", lambda folder: {"commit": "c0ffee"})

    def run(cmd, log):
        seen.append(read_json(log.parents[2] / "costs.json"))
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("Finished jobid: 1 (Rule: a_step)\n")
        return 0, {"cpu_s": 2.0, "wall_s": 1.0, "peak_rss_mb": 10.0}
    monkeypatch.setattr(timedbuild, "run_measured", run)


def test_a_sitting_is_recorded_before_it_runs_and_a_killed_one_is_counted_lost(tmp_path, monkeypatch):
    seen = []
    _fake_snakemake(monkeypatch, seen)
    costs_file = tmp_path / "costs.json"
    # the last sitting was killed outright: it had recorded itself as running, and nothing after
    costs = {"a": {"cpu_s": 5.0, "wall_s": 5.0, "peak_rss_mb": 1.0, "jobs": 1, "sittings": 1, "complete": False,
                   "fingerprint_started": {"f": "1"}, "running": "2026-12-07T00:00:00Z"}}
    write_json(costs_file, costs)
    assert build_paper("a", tmp_path, costs, [], costs_file) == 0
    during = seen[0]["a"]
    assert during["running"] != "2026-12-07T00:00:00Z" and during["lost_sittings"] == 1  # written before the run
    entry = costs["a"]
    assert "running" not in entry and entry["lost_sittings"] == 1 and entry["sittings"] == 2
    assert entry["cpu_s"] == 7.0 and entry["complete"] and entry["fingerprint"] == {"f": "1"}
    assert (tmp_path / "logs/timedbuild/a.3.log").is_file()  # numbered after the lost sitting, none overwritten
    assert _measured_text(entry) == "at least 7.0 (2 sittings, 1 lost unmeasured)"
    assert _measured_text({"cpu_s": 3.0, "sittings": 1}) == "3.0 (1 sitting)"


def test_outputs_that_no_recorded_sitting_made_are_removed_first(tmp_path, monkeypatch):
    seen = []
    _fake_snakemake(monkeypatch, seen)
    (tmp_path / "workflow").mkdir()
    (tmp_path / "workflow/papers.yaml").write_text("papers:\n  - key: a\n  - key: b\nstages: []\n")
    for key in ("a", "b"):
        (tmp_path / f"results/{key}").mkdir(parents=True)
        (tmp_path / f"results/{key}/metrics.json").write_text("{}")
    write_json(tmp_path / "costs.json", {"b": {"cpu_s": 1.0, "wall_s": 1.0, "peak_rss_mb": 1.0, "jobs": 1,
                                               "sittings": 1, "complete": False, "fingerprint_started": {"f": "1"}}})
    monkeypatch.setattr(timedbuild, "changed_inputs", lambda key, folder, entry: [])  # the same code as recorded
    monkeypatch.chdir(tmp_path)
    assert timedbuild.main(["--papers", "a", "b", "--only"]) == 0
    assert not (tmp_path / "results/a").exists()  # no record: unknown code, and its cost would not be from empty
    assert (tmp_path / "results/b/metrics.json").is_file()  # a recorded, unchanged sitting's work is resumed
    assert set(read_json(tmp_path / "costs.json")) == {"a", "b"}
