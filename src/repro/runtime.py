"""Process environment for workflow jobs, set once by the Snakefile before any job starts."""

from __future__ import annotations

import os
import sys

__all__ = ["configure_environment", "FIXED_SOURCE_DATE_EPOCH"]

#: 2025-12-02 00:00 UTC: the date stamped into every PDF, so rebuilt figures are byte-identical.
FIXED_SOURCE_DATE_EPOCH = "1764633600"


def configure_environment(src: str, *, offline: bool) -> None:
    """Make jobs import ``repro`` from ``src`` and keep them offline and deterministic.

    Jobs inherit the environment (a SLURM job too, with sbatch's default ``--export=ALL``), so the
    checkout's library is used whether or not it is installed.
    """
    current = os.environ.get("PYTHONPATH", "")
    if src not in current.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (src, current) if p)
    if src not in sys.path:
        sys.path.insert(0, src)
    if offline:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # timm otherwise retries a hub for about a minute
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("SOURCE_DATE_EPOCH", FIXED_SOURCE_DATE_EPOCH)
    os.environ.setdefault("MPLBACKEND", "Agg")
