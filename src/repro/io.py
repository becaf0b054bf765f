"""Atomic file output: nothing half-written is ever left where a later step would read it.

Every writer in the project goes through :func:`atomic_path`: the data goes to a temporary file in
the destination's own folder (same file system, so the final ``os.replace`` is atomic), and the
temporary file is removed if anything fails before the rename. A writer may put a folder in the
temporary file's place (``tmp.unlink(); tmp.mkdir()``): the folder then replaces the destination
whole, and is removed whole on failure.

The project's intermediates are read back through one set of readers, :func:`read_json`,
:func:`load_npz`, :func:`load_torch` and :func:`open_h5`: a truncated or otherwise damaged file is a
``ValueError`` that names the file and how it is damaged ("results/x.npz: not a valid .npz archive
(truncated or corrupted: ...); delete it to rebuild"), not an exception from deep inside a library
that names neither; a missing file stays a ``FileNotFoundError``. :func:`load_torch` loads with
``weights_only=True`` (tensors and plain containers, no code runs); :func:`save_torch` writes what it
loads (numpy scalars become Python numbers, numeric arrays tensors, anything else is refused).

A write that runs out of room (a full disk, ENOSPC; a quota, EDQUOT; a file-size limit, EFBIG) fails with an
``OSError`` of that errno naming the file it was writing, whatever the library doing the writing made of the
first failed ``write`` (matplotlib's PDF backend turns it into a ``zlib.error`` while it closes the file).
"""

from __future__ import annotations

import collections
import contextlib
import errno
import glob
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["atomic_path", "atomic_open", "current_umask", "write_json", "read_json", "to_jsonable", "load_npz",
           "load_torch", "save_torch", "open_h5", "out_of_room"]

#: How every damaged-file message ends: the file is an intermediate, so rebuilding it is the fix.
REBUILD = "delete it to rebuild"

#: The errnos of a write that ran out of room, with what each says.
NO_ROOM = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
           errno.EFBIG: "file size limit exceeded"}


def out_of_room(err: BaseException) -> OSError | None:
    """The ENOSPC/EDQUOT/EFBIG ``OSError`` in ``err`` or in the exceptions it was raised from or while handling;
    None if there is none. A library that catches the failed ``write`` and raises its own error (matplotlib's
    PDF backend, zipfile) still carries it in the chain."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno in NO_ROOM:
            return err
        err = err.__cause__ or err.__context__
    return None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` when the block succeeds.

    The temporary name keeps the suffix of ``path`` so that libraries which choose a format from
    the extension (matplotlib, h5py, pandas) behave as they would on the final name.

    The block may replace the temporary file by a folder. A folder already at ``path`` is then
    swapped out (renamed aside, the new one renamed in, the old one removed), so ``path`` holds
    the old folder or the new one, never a mixture; if the block fails, the temporary folder is
    removed and the old one stays.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix, suffix = f".{path.stem}.", f"{path.suffix}.tmp{path.suffix}"
    # A job killed outright (SIGKILL, power cut) cannot remove its temporary file or folder. Each
    # output has exactly one producing job, so a leftover beside this path is stale: remove it now.
    for stale in path.parent.glob(f"{glob.escape(prefix)}*{glob.escape(suffix)}"):
        _remove(stale)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        # mkstemp creates the file 0600; the result is the user's file and honours the umask,
        # like any file they write (colleagues on a cluster must be able to read the figures).
        os.chmod(tmp, (0o777 if tmp.is_dir() else 0o666) & ~current_umask())
        if tmp.is_dir() and not tmp.is_symlink() and path.is_dir() and not path.is_symlink():
            _swap_folder(tmp, path, prefix, suffix)
        else:
            os.replace(tmp, path)
    except BaseException as err:
        _remove(tmp)
        full = out_of_room(err)
        if full is None or getattr(full, "unwritten", None) is not None:  # not out of room, or named already
            raise
        named = OSError(full.errno, f"{path}: {NO_ROOM[full.errno]} while writing it; nothing was written under its "
                                    "name: make room and rerun")
        named.unwritten = str(path)
        raise named from err


def _remove(path: Path) -> None:
    """Remove a file or a whole folder; absent is fine."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _swap_folder(new: Path, path: Path, prefix: str, suffix: str) -> None:
    """Put folder ``new`` at ``path``, where a folder already is (``os.replace`` refuses a non-empty one).

    The old folder is renamed aside under a temporary name (which the next write's stale clean-up
    matches, should this process be killed before it removes it), then ``new`` is renamed in.
    """
    aside = Path(tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=path.parent))
    os.replace(path, aside)  # onto the empty folder mkdtemp made
    try:
        os.replace(new, path)
    except BaseException:
        os.replace(aside, path)
        raise
    _remove(aside)


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


def _damaged(path: str | os.PathLike, what: str, err: BaseException) -> ValueError:
    detail = str(err).strip().splitlines()[0][:200] if str(err).strip() else "no detail"
    return ValueError(f"{path}: {what} (truncated or corrupted: {type(err).__name__}: {detail}); {REBUILD}")


def read_json(path: str | os.PathLike) -> Any:
    """The JSON document in ``path``; a damaged file is a ``ValueError`` naming it."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON (truncated or corrupted: {e.msg} at line {e.lineno}, column "
                         f"{e.colno}); {REBUILD}") from e
    except UnicodeDecodeError as e:
        raise _damaged(path, "not valid JSON", e) from e


def load_npz(path: str | os.PathLike, keys: Iterable[str] | None = None) -> dict[str, Any]:
    """The arrays of the ``.npz`` archive ``path`` (those named in ``keys``, else all), read now: a damaged
    archive (a bad header, a truncated member, a failed CRC) is a ``ValueError`` naming the file, as is
    a missing array. No pickles (``allow_pickle=False``)."""
    import zipfile
    import zlib

    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as z:
            if not hasattr(z, "files"):
                raise ValueError(f"{path}: a single .npy array, not a .npz archive; {REBUILD}")
            names = list(z.files) if keys is None else list(keys)
            missing = [k for k in names if k not in z.files]
            if missing:
                raise ValueError(f"{path}: no array {missing[0]!r} in the .npz archive (it holds {sorted(z.files)}); "
                                 f"{REBUILD}")
            return {k: z[k] for k in names}
    except FileNotFoundError:
        raise
    except ValueError as e:
        if str(e).startswith(f"{path}: "):
            raise
        raise _damaged(path, "not a valid .npz archive", e) from e
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError) as e:
        raise _damaged(path, "not a valid .npz archive", e) from e


def load_torch(path: str | os.PathLike, *, map_location: Any = "cpu") -> Any:
    """``torch.load(path, weights_only=True)``: tensors and plain containers only, so no code in the file
    runs. A file holding any other object is refused, and a damaged one is named, with a ``ValueError``."""
    import pickle

    import torch

    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except FileNotFoundError:
        raise
    except pickle.UnpicklingError as e:
        found = re.search(r"Unsupported global: GLOBAL (\S+)", str(e))
        if found:
            raise ValueError(f"{path}: holds a {found.group(1)} object, which is not a tensor or a plain container; "
                             "refused (weights load with weights_only=True, which runs no code from the file); "
                             f"{REBUILD} with this version") from None
        raise _damaged(path, "not a valid torch file", e) from None
    except Exception as e:  # zip reader errors are RuntimeErrors; short reads EOFError or OSError
        raise _damaged(path, "not a valid torch file", e) from e


def _torch_safe(obj: Any, where: str) -> Any:
    import numpy as np
    import torch

    if isinstance(obj, np.generic):  # before float: np.float64 is a float, and pickles as a numpy scalar
        return obj.item()
    if obj is None or isinstance(obj, (str, bytes, bool, int, float, complex, torch.Tensor, torch.Size, torch.dtype,
                                       torch.device)):
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "US":
            return obj.tolist()
        if obj.dtype.kind not in "biufc":
            raise TypeError(f"{where or 'the object'} is an array of dtype {obj.dtype}")
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, dict):
        items = [(_torch_safe(k, f"{where}[key]"), _torch_safe(v, f"{where}.{k}".lstrip("."))) for k, v in obj.items()]
        return type(obj)(items) if type(obj) in (dict, collections.OrderedDict) else dict(items)
    if isinstance(obj, (list, tuple)):
        out = [_torch_safe(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        return out if isinstance(obj, list) else tuple(out)
    raise TypeError(f"{where or 'the object'} is a {type(obj).__module__}.{type(obj).__qualname__}")


def save_torch(obj: Any, path: str | os.PathLike) -> None:
    """``torch.save`` of ``obj`` atomically, in a form :func:`load_torch` reads: numpy scalars become Python
    numbers, numeric numpy arrays tensors (the loader rebuilds an array where it needs one), paths strings;
    any other object (a dataclass, a model) is refused with a ``ValueError`` naming where it is."""
    import torch

    try:
        safe = _torch_safe(obj, "")
    except TypeError as e:
        raise ValueError(f"{path}: cannot store {e} in a weights-only torch file (tensors, numbers, strings, "
                         "lists, tuples and dicts); convert it first") from None
    with atomic_path(path) as tmp:
        torch.save(safe, tmp)


@contextlib.contextmanager
def open_h5(path: str | os.PathLike, mode: str = "r") -> Iterator[Any]:
    """``h5py.File(path, mode)`` for reading an intermediate: a file that does not open as HDF5 (truncated,
    not HDF5), or whose objects cannot be read inside the block (a damaged object header, a missing
    dataset or attribute), is a ``ValueError`` naming the file."""
    import h5py

    try:
        f = h5py.File(path, mode)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise _damaged(path, "not a valid HDF5 file", e) from e
    try:
        with f:
            yield f
    except (KeyError, RuntimeError, OSError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        raise ValueError(f"{path}: damaged or incomplete HDF5 file ({type(e).__name__}: {message}); {REBUILD}") from e
