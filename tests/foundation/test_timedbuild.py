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
from repro.timedbuild import FINISHED, run_measured, touched_stages


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
