"""The tree is clean under the ruff configuration in pyproject.toml (``[tool.ruff]``).

ruff is a test dependency (the ``test`` extra), so a missing ruff fails this test rather than skipping it.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

PATHS = ("src", "workflow/scripts", "tests")


def test_ruff_check_is_clean():
    cmd = [sys.executable, "-m", "ruff", "check", *PATHS]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"`{' '.join(cmd[1:])}` exited {proc.returncode} (is ruff installed? it is in the test extra):\n"
        f"{proc.stdout}{proc.stderr}"
    )
