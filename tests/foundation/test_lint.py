"""The tree is clean under ruff and the rule files under snakefmt (``[tool.ruff]``, ``[tool.snakefmt]`` in pyproject.toml).

Both are test dependencies (the ``test`` extra), so a missing one fails these tests rather than skipping them.
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


def test_rule_files_are_formatted_by_snakefmt():
    cmd = [sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow/rules"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"`snakefmt --check` exited {proc.returncode}: run `snakefmt Snakefile workflow/rules` "
        f"(snakefmt is in the test extra):\n{proc.stdout}{proc.stderr}"
    )
