"""A write that runs out of room (a full disk, a quota, a file-size limit) is an OSError naming the file.

What a user relies on: a clear error naming the file, nothing partial under a final name, and a correct
result on the next run. A full disk is made without root by a file-size limit (``RLIMIT_FSIZE`` with
``SIGXFSZ`` ignored, so a write past it fails with ``EFBIG`` as it would with ``ENOSPC``) in a child
process, and by a writer that raises ``ENOSPC`` itself. The same faults in the jobs of a built workflow:
tests/workflow/test_fault_injection.py.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from repro.io import atomic_open, atomic_path, out_of_room

REPO = Path(__file__).resolve().parents[2]


def _in_child(code: str, limit: int | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python whose files may grow to at most ``limit`` bytes (None: no limit)."""
    prelude = "import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
    if limit is not None:
        prelude += (
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
        )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=120, env=env
    )


FIGURE = """
    import numpy as np, pandas as pd
    from repro.figures import style
    fig, ax = style.subplots(width="column")
    x = np.random.default_rng(0).normal(size=3000)
    ax.plot(x)
    style.save(fig, pd.DataFrame({"x": x}), PATH)
"""


def test_a_figure_on_a_full_disk_names_the_file_and_leaves_nothing_then_builds(tmp_path):
    pdf = tmp_path / "reports" / "paper_fig1.pdf"
    # 20 kB: the figure's PDF and CSV (about 60 kB each) do not fit, the temporary file is started
    full = _in_child(FIGURE.replace("PATH", repr(str(pdf))), limit=20_000)
    assert full.returncode != 0
    last = full.stderr.strip().splitlines()[-1]
    assert last.startswith(f"OSError: [Errno {errno.EFBIG}] {pdf}: file size limit exceeded while writing it"), last
    assert "AttributeError" not in full.stderr and "zlib.error: " not in last
    assert sorted(p.name for p in pdf.parent.iterdir()) == []  # no PDF, no CSV, no temporary file

    again = _in_child(FIGURE.replace("PATH", repr(str(pdf))))
    assert again.returncode == 0, again.stderr[-2000:]
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.with_suffix(".csv").stat().st_size > 0
    assert sorted(p.name for p in pdf.parent.iterdir()) == ["paper_fig1.csv", "paper_fig1.pdf"]


def test_a_library_that_hides_enospc_in_its_own_error_still_gives_enospc_naming_the_file(tmp_path):
    # what matplotlib's PDF backend does: the write fails with ENOSPC, and closing its zlib stream raises zlib.error
    target = tmp_path / "fig.pdf"
    target.write_bytes(b"old")
    with pytest.raises(OSError) as caught:
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"%PDF-1.4 partial")
            try:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            except OSError:
                raise zlib.error("Error -2 while flushing: inconsistent stream state") from None
    assert caught.value.errno == errno.ENOSPC
    assert str(caught.value).startswith(f"[Errno {errno.ENOSPC}] {target}: no space left on the device")
    assert target.read_bytes() == b"old"  # the last good file stays, no temporary beside it
    assert [p.name for p in tmp_path.iterdir()] == ["fig.pdf"]


def test_nested_writers_name_the_innermost_file_and_other_errors_pass_unchanged(tmp_path):
    with pytest.raises(OSError, match=r"table\.csv: no space left"):
        with atomic_path(tmp_path / "fig.pdf"):
            with atomic_open(tmp_path / "table.csv") as fh:
                fh.write("a,b\n")
                raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(ValueError, match="^bad value$"):
        with atomic_path(tmp_path / "x.json"):
            raise ValueError("bad value")
    assert out_of_room(ValueError("x")) is None
    assert list(tmp_path.iterdir()) == []
