"""Fetch real data: HTTP(S) download with resume, checksums, retries and atomic rename.

:func:`fetch_url` downloads into ``<dest>.part`` beside the destination (one name per destination,
so the next run finds it), resuming an interrupted transfer with a ``Range`` request, verifies the
sha256 (or md5) of the whole file, runs the caller's ``check`` on it, and only then renames it onto
``dest``. A transfer that stays short after every retry is a :class:`FetchError` naming the URL that
keeps ``<dest>.part`` for the next run to resume; a checksum mismatch or a file ``check`` refuses is
one that keeps nothing. Pass the final output as ``dest`` (not a temporary name of
:func:`repro.io.atomic_path`: a random name is never resumed). Archives are
unpacked by :func:`safe_extract` with path-traversal protection, and tensors are loaded by
:func:`load_tensors` without executing code (safetensors, or ``torch.load(weights_only=True)``).
"""

from __future__ import annotations

import glob
import hashlib
import http.client
import logging
import os
import shutil
import socket
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from repro.io import atomic_path

__all__ = ["FetchError", "fetch_url", "partial_path", "file_digest", "safe_extract", "load_tensors"]

log = logging.getLogger(__name__)

CHUNK = 1 << 20
USER_AGENT = "neurips26-repro-fetch/1"


class FetchError(RuntimeError):
    """A download failed for good: bad status, short transfer after retries, or a wrong checksum."""


def file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _download_once(url: str, part: Path, timeout: float) -> None:
    """One attempt: continue ``part`` from its current size; raises on a short or failed transfer."""
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)  # URLs come from the manifest
    except urllib.error.HTTPError as err:
        if err.code == 416 and have:  # nothing left to send: the part file is already whole
            return
        raise
    with response:
        status = getattr(response, "status", 200)
        if have and status != 206:  # the server ignored the Range header: start over
            log.info("%s: server does not resume; downloading from the start", url)
            have = 0
        length = response.headers.get("Content-Length")
        expected = have + int(length) if length is not None else None
        with open(part, "ab" if have else "wb") as fh:
            shutil.copyfileobj(response, fh, CHUNK)
    got = part.stat().st_size
    if expected is not None and got < expected:
        raise http.client.IncompleteRead(b"", expected - got)


def partial_path(dest: str | os.PathLike) -> Path:
    """Where :func:`fetch_url` keeps the bytes of ``dest`` while they arrive: ``<dest>.part``."""
    dest = Path(dest)
    return dest.with_name(dest.name + ".part")


def _remove_stray_partials(dest: Path) -> None:
    """Remove partial downloads of ``dest`` under names no run resumes.

    Earlier versions of the fetch scripts downloaded into a temporary name of
    :func:`repro.io.atomic_path` (``.<stem>.<random><suffix>.tmp<suffix>``), so a cut transfer left
    ``<that name>.part`` behind, never found again. ``dest`` has one producing job: they are stale.
    """
    pattern = f".{glob.escape(dest.stem)}.*{glob.escape(dest.suffix)}.tmp{glob.escape(dest.suffix)}.part"
    for stray in dest.parent.glob(pattern):
        log.info("removing a stray partial download %s", stray)
        stray.unlink(missing_ok=True)


def _transfer(url: str, part: Path, retries: int, timeout: float, backoff: float) -> None:
    """Fill ``part`` with the whole of ``url``, resuming it; a failure for good is a FetchError naming the URL."""
    delay = backoff
    for attempt in range(retries + 1):
        try:
            _download_once(url, part, timeout)
            return
        except urllib.error.HTTPError as err:
            if err.code < 500 or attempt == retries:
                part.unlink(missing_ok=True)
                raise FetchError(f"{url}: HTTP {err.code} {err.reason}") from None
            reason = f"HTTP {err.code}"
        except (urllib.error.URLError, http.client.HTTPException, socket.timeout, ConnectionError, OSError) as err:
            if attempt == retries:
                size = part.stat().st_size if part.exists() else 0
                kept = (f"{size} bytes kept in {part}; the next run resumes from there" if size
                        else "nothing was received")
                raise FetchError(f"{url}: transfer failed after {retries + 1} attempt{'s' if retries else ''} "
                                 f"({kept}): {err!r}") from None
            reason = repr(err)
        log.warning("%s: attempt %d failed (%s); retrying in %.1f s", url, attempt + 1, reason, delay)
        time.sleep(delay)
        delay *= 2


def fetch_url(url: str, dest: str | os.PathLike, *, sha256: str | None = None, md5: str | None = None,
              retries: int = 3, timeout: float = 60.0, backoff: float = 1.0,
              check: Callable[[Path], Any] | None = None) -> Path:
    """Download ``url`` to ``dest``, resuming and verifying; returns ``dest``.

    Parameters
    ----------
    url : str
        ``http(s)://`` or ``file://`` address.
    dest : path
        Final location (a job's output itself); it appears only once the whole file is there, its
        checksum matches and ``check`` accepts it. The bytes arrive in ``<dest>.part``, which a
        failed run leaves for the next one to resume with a ``Range`` request.
    sha256, md5 : str, optional
        Expected hex digest (sha256 preferred). With neither, the file is accepted unverified
        and a warning is logged.
    retries : int
        Further attempts after a failed one (connection cut, timeout, 5xx), each resuming.
    backoff : float
        Seconds before the first retry; doubled after each.
    check : callable, optional
        Called with the verified file under a temporary name that keeps ``dest``'s suffix (for
        readers that choose a format by it); an exception from it leaves nothing at ``dest`` and
        no partial file (the bytes were whole and verified: the data itself is bad).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stray_partials(dest)
    part = partial_path(dest)
    algorithm, expected = ("sha256", sha256) if sha256 else ("md5", md5) if md5 else (None, None)
    resumed = part.exists() and part.stat().st_size > 0
    _transfer(url, part, retries, timeout, backoff)
    if algorithm is None:
        log.warning("%s: no checksum given; accepting the file unverified", url)
    else:
        actual = file_digest(part, algorithm)
        if actual.lower() != expected.lower() and resumed:
            # the bytes kept by an earlier run may belong to another version of the file: start over once
            log.warning("%s: %s mismatch after resuming %s; downloading it again from the start", url, algorithm, part)
            part.unlink(missing_ok=True)
            _transfer(url, part, retries, timeout, backoff)
            actual = file_digest(part, algorithm)
        if actual.lower() != expected.lower():
            part.unlink(missing_ok=True)
            raise FetchError(f"{url}: {algorithm} mismatch: expected {expected}, got {actual}; nothing was kept")
    if check is None:
        os.replace(part, dest)
    else:
        try:
            with atomic_path(dest) as staged:
                os.replace(part, staged)
                check(staged)
        finally:
            part.unlink(missing_ok=True)
    log.info("fetched %s -> %s (%d bytes)", url, dest, dest.stat().st_size)
    return dest


def _check_member(name: str, archive: Path) -> None:
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or (pure.parts and ":" in pure.parts[0]):
        raise FetchError(f"{archive}: member {name!r} would be written outside the target folder")


def safe_extract(archive: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Unpack a tar or zip archive into the new folder ``dest``.

    Every member is checked first: one that would land outside ``dest`` (``../``, an absolute
    path, a link pointing out) is an error and nothing is extracted. Members are unpacked into a
    temporary folder beside ``dest`` that is renamed onto it at the end, so a failure leaves no
    half-unpacked folder.
    """
    archive, dest = Path(archive), Path(dest)
    if dest.exists():
        raise FileExistsError(f"{dest} exists; refusing to unpack {archive} over it")
    if tarfile.is_tarfile(archive):
        opener, kind = tarfile.open, "tar"
    elif zipfile.is_zipfile(archive):
        opener, kind = zipfile.ZipFile, "zip"
    else:
        raise FetchError(f"{archive}: not a tar or zip archive")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        with opener(archive) as handle:
            if kind == "tar":
                for member in handle.getmembers():
                    _check_member(member.name, archive)
                    if member.issym() or member.islnk():
                        _check_member(str(PurePosixPath(member.name).parent / member.linkname), archive)
                handle.extractall(tmp, filter="data")  # the stdlib's own guard, on top of ours
            else:
                for name in handle.namelist():
                    _check_member(name, archive)
                handle.extractall(tmp)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def load_tensors(path: str | os.PathLike) -> Any:
    """Load weights without running code from the file: safetensors, else ``weights_only=True``."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"weights file {path} does not exist")
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path))
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # pickle with arbitrary objects is refused, by design
        raise ValueError(f"{path}: not loadable as plain tensors (weights_only=True): {err}") from None
