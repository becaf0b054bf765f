"""repro.timedbuild measures a build's CPU time and memory including the processes it starts."""

import resource
import sys
import textwrap

from repro.timedbuild import FINISHED, run_measured


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
