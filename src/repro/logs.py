"""Logging and progress for pipeline jobs.

Scripts call :func:`setup_job_logging` with Snakemake's log path; library code only uses
``logging.getLogger(__name__)`` and :func:`progress`. Progress bars go to the log (stderr), and
update at most every few seconds so that a log stays readable.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

__all__ = ["setup_job_logging", "progress"]

T = TypeVar("T")

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_job_logging(log_path: str | os.PathLike | None, level: int = logging.INFO) -> None:
    """Send logging records and stderr (warnings, tracebacks, progress bars) to ``log_path``."""
    if log_path is not None:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        stream = open(log_path, "w", buffering=1, encoding="utf-8")  # lives for the job
        sys.stderr = stream
    logging.basicConfig(level=level, format=_FORMAT, stream=sys.stderr, force=True)
    logging.captureWarnings(True)


def progress(iterable: Iterable[T], *, desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """Wrap a loop that can take minutes in a tqdm bar written to stderr (so into the job's log)."""
    from tqdm.auto import tqdm

    return iter(tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr, mininterval=5.0,
                     dynamic_ncols=False, ncols=100, disable=os.environ.get("REPRO_NO_PROGRESS") == "1"))
