"""Checksum sidecars: ``<path>.sha256`` beside a file or folder that later jobs read on trust.

A job that downloads or caches data writes it once; every later job reads it without knowing whether
it is still what was written. The writing job therefore records the sha256 of the finished file (or
folder) beside it with :func:`write_sidecar`, and a reader checks it first with :func:`verify` (or
:func:`verify_inputs` over a job's declared inputs): a file truncated, corrupted or replaced since is
a ``ValueError`` naming it, the digest recorded and the digest found, and saying to delete it to
rebuild; a missing sidecar is a ``FileNotFoundError`` naming it. The rule that writes the file declares
the sidecar as an output, so a build that lost it runs the job again; the rules that read the file
declare it as an input.

The sidecar is one line as ``sha256sum`` writes it, ``<hex digest>  <name>``, so ``sha256sum -c`` in
the file's folder checks a file's sidecar too. It is written atomically (:func:`repro.io.atomic_open`)
after the file is complete: a job killed in between leaves a file without a sidecar, which is refused.
Files are hashed in blocks (a slide or a model's weights need not fit in memory).

A folder's digest (its sidecar's name ends with ``/``) is the sha256 of its listing: one line
``<sha256 of the file>  <path relative to the folder>`` per file under it (links are not followed),
in sorted order of the POSIX relative path. Any file added, removed, renamed or changed changes it;
empty folders do not count.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

from repro.data.fetch import file_digest
from repro.io import REBUILD, atomic_open

__all__ = ["SUFFIX", "sidecar_path", "digest", "write_sidecar", "read_sidecar", "verify", "verify_inputs"]

log = logging.getLogger(__name__)

#: What a sidecar's name adds to the name of the file it describes.
SUFFIX = ".sha256"

_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")


def sidecar_path(path: str | os.PathLike) -> Path:
    """``<path>.sha256``, beside ``path`` (a file, or a folder: ``resources/llm/x`` -> ``resources/llm/x.sha256``)."""
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


def _folder_listing(folder: Path) -> str:
    lines = []
    for base, dirs, files in os.walk(folder):  # links to folders are listed in dirs and not entered
        for name in files + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            item = Path(base, name)
            rel = item.relative_to(folder).as_posix()
            if "\n" in rel:
                raise ValueError(f"{folder}: file name {rel!r} holds a newline; a checksum listing cannot name it")
            if item.is_symlink():
                content = hashlib.sha256(os.readlink(item).encode()).hexdigest()  # the link itself, not its target
            else:
                content = file_digest(item)
            lines.append((rel, f"{content}  {rel}\n"))
    return "".join(line for _, line in sorted(lines))


def digest(path: str | os.PathLike) -> str:
    """The sha256 (hex) of the file ``path``, or of the listing of the folder ``path`` (module docstring)."""
    path = Path(path)
    if path.is_dir():
        return hashlib.sha256(_folder_listing(path).encode()).hexdigest()
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist (nothing to checksum)")
    return file_digest(path)


def write_sidecar(path: str | os.PathLike) -> str:
    """Write ``<path>.sha256`` for the finished file or folder ``path``; return the digest.

    Call it after ``path`` is complete under its final name (after an atomic rename), never before.
    """
    path = Path(path)
    value = digest(path)
    name = path.name + ("/" if path.is_dir() else "")
    with atomic_open(sidecar_path(path), "w", encoding="utf-8") as fh:
        fh.write(f"{value}  {name}\n")
    log.info("%s: sha256 %s", path, value)
    return value


def read_sidecar(path: str | os.PathLike) -> str:
    """The digest recorded in ``<path>.sha256``; a missing or malformed sidecar is an error naming it."""
    path = Path(path)
    side = sidecar_path(path)
    try:
        text = side.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: its checksum file {side} is missing, so the data cannot be trusted (written "
                                f"by an older version of the job, or cut off before it finished); {REBUILD}") from None
    match = _LINE.match(text.strip())
    if match is None:
        raise ValueError(f"{side}: not a checksum line ('<64 hex digits>  <name>'): {text[:80]!r}; "
                         f"delete it and {path} to rebuild")
    return match.group(1)


def verify(path: str | os.PathLike) -> Path:
    """Check the file or folder ``path`` against its sidecar; return ``path``.

    Raises
    ------
    FileNotFoundError
        ``path`` or its sidecar is missing (each named).
    ValueError
        The digest differs from the recorded one: names ``path``, both digests, and says to delete it
        to rebuild it.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    expected = read_sidecar(path)
    actual = digest(path)
    if actual != expected:
        raise ValueError(f"{path}: sha256 is {actual} but {sidecar_path(path)} records {expected} (changed, "
                         f"truncated or corrupted since it was written); {REBUILD}")
    log.debug("%s: sha256 %s checked", path, actual)
    return path


def verify_inputs(inputs: Iterable[str | os.PathLike]) -> list[Path]:
    """Check every file among a job's inputs whose sidecar is among them too; return those checked.

    ``inputs`` is a job's declared inputs (``snakemake.input``): a rule lists the sidecar beside the
    file it must be checked against, and a script calls this first. Inputs without a sidecar are left
    alone, so the same script serves a source that fetches nothing.
    """
    paths = [os.path.normpath(os.fspath(p)) for p in inputs]
    declared = set(paths)
    return [verify(p) for p in dict.fromkeys(paths) if p + SUFFIX in declared]
