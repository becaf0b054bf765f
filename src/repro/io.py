"""Atomic file output: nothing half-written is ever left where a later step would read it.

Every writer in the project goes through :func:`atomic_path`: the data goes to a temporary file in
the destination's own folder (same file system, so the final ``os.replace`` is atomic), and the
temporary file is removed if anything fails before the rename.
"""

from __future__ import annotations

import contextlib
import glob
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["atomic_path", "atomic_open", "current_umask", "write_json", "read_json", "to_jsonable"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` when the block succeeds.

    The temporary name keeps the suffix of ``path`` so that libraries which choose a format from
    the extension (matplotlib, h5py, pandas) behave as they would on the final name.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix, suffix = f".{path.stem}.", f"{path.suffix}.tmp{path.suffix}"
    # A job killed outright (SIGKILL, power cut) cannot remove its temporary file. Each output has
    # exactly one producing job, so a leftover beside this path is stale: remove it now.
    for stale in path.parent.glob(f"{glob.escape(prefix)}*{glob.escape(suffix)}"):
        stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        # mkstemp creates the file 0600; the result is the user's file and honours the umask,
        # like any file they write (colleagues on a cluster must be able to read the figures).
        os.chmod(tmp, (0o777 if tmp.is_dir() else 0o666) & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process umask (read from /proc where it can be, so no thread ever sees it changed)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", **kwargs: Any) -> Iterator[Any]:
    """``open`` whose result appears at ``path`` only once the block has finished without error."""
    if not any(m in mode for m in "wx"):
        raise ValueError(f"atomic_open writes only; got mode {mode!r} for {path}")
    with atomic_path(path) as tmp:
        with open(tmp, mode.replace("x", "w"), **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, paths and tuples into plain JSON types; NaN becomes None."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist"):  # numpy scalar or array, torch tensor
        return to_jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` as sorted, indented JSON, atomically."""
    with atomic_open(path, "w", encoding="utf-8") as fh:
        json.dump(to_jsonable(obj), fh, indent=2, sort_keys=True, allow_nan=False)
        fh.write("\n")


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
