"""Labelled image sets: a class-per-subfolder folder or an ``.npz``, fetched and checked by sha256.

The layout of CIFAR-100 / ImageNet-R class splits as image folders: ``root/<class>/<image>``, one
subfolder per class (its name is the class), images in any format Pillow reads. An ``.npz`` holds
``x`` (``N x H x W``, ``N x H x W x C`` or ``N x D``) and integer ``y`` (``N``), optionally
``classes`` (the class names, indexed by ``y``).

:func:`fetch_image_set` downloads one file (an ``.npz``, or a tar/zip archive of an image folder)
with :func:`repro.data.fetch.fetch_url`, which refuses it unless its sha256 matches and then leaves
nothing behind, and resumes a transfer cut by an earlier run (the download's name beside the output
is fixed: :func:`download_path`); the folder is unpacked into a temporary directory, read, and the set
is written as one normalised ``.npz`` (``x`` float32 in [0, 1], ``N x H x W x C``; ``y``; ``classes``)
that appears only when complete.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repro.data.fetch import fetch_url, safe_extract
from repro.io import atomic_path, load_npz

__all__ = ["ImageSet", "read_image_folder", "read_npz", "write_npz", "fetch_image_set", "download_path",
           "IMAGE_SUFFIXES"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".ppm", ".pgm", ".tif", ".tiff", ".webp")


@dataclass
class ImageSet:
    x: np.ndarray
    """images, float32 in [0, 1], N x H x W x C (or N x D for an .npz of feature rows)"""
    y: np.ndarray
    """class index per image (int64), into ``classes``"""
    classes: list[str]

    def __post_init__(self):
        if len(self.x) != len(self.y):
            raise ValueError(f"image set: {len(self.x)} images but {len(self.y)} labels")
        if len(self.y) and (self.y.min() < 0 or self.y.max() >= len(self.classes)):
            raise ValueError(f"image set: labels must lie in 0..{len(self.classes) - 1}; "
                             f"got {self.y.min()}..{self.y.max()}")


def read_image_folder(root: str | os.PathLike, size: int, mode: str = "RGB") -> ImageSet:
    """Every image under ``root/<class>/``, converted to ``mode`` ("RGB" or "L") and resized to size x size."""
    from PIL import Image, UnidentifiedImageError

    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"image folder {root} does not exist")
    classes = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not classes:
        raise ValueError(f"image folder {root}: no class subfolders (expected root/<class>/<image>)")
    xs, ys = [], []
    for k, name in enumerate(classes):
        files = sorted(p for p in (root / name).rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise ValueError(f"image folder {root}: class folder {name!r} holds no images ({', '.join(IMAGE_SUFFIXES)})")
        for f in files:
            try:
                with Image.open(f) as img:
                    arr = np.asarray(img.convert(mode).resize((size, size), Image.BILINEAR), dtype=np.float32)
            except (UnidentifiedImageError, OSError) as err:
                raise ValueError(f"image folder {root}: cannot read image {f}: {err}") from None
            xs.append(arr.reshape(size, size, -1) / 255.0)
            ys.append(k)
    return ImageSet(np.stack(xs), np.asarray(ys, dtype=np.int64), classes)


def read_npz(path: str | os.PathLike) -> ImageSet:
    """An ``.npz`` with ``x`` and integer ``y`` (and optional ``classes``); uint8 images are scaled to [0, 1]."""
    path = Path(path)
    data = load_npz(path)  # a damaged archive (or not an .npz): a ValueError naming the file
    missing = [k for k in ("x", "y") if k not in data]
    if missing:
        raise ValueError(f"{path}: missing array(s) {', '.join(missing)} (has {', '.join(data) or 'none'})")
    x, y = data["x"], data["y"]
    classes = [str(c) for c in data["classes"]] if "classes" in data else None
    if not np.issubdtype(y.dtype, np.integer) or y.ndim != 1:
        raise ValueError(f"{path}: y must be a 1-d integer array; got {y.dtype} with shape {y.shape}")
    if x.ndim not in (2, 3, 4):
        raise ValueError(f"{path}: x must be N x D, N x H x W or N x H x W x C; got shape {x.shape}")
    x = x.astype(np.float32) / (255.0 if x.dtype == np.uint8 else 1.0)
    if x.ndim == 3:
        x = x[..., None]
    if classes is None:
        classes = [str(c) for c in range(int(y.max()) + 1 if len(y) else 0)]
    return ImageSet(x, y.astype(np.int64), classes)


def write_npz(images: ImageSet, dest: str | os.PathLike) -> Path:
    with atomic_path(dest) as tmp:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, x=images.x, y=images.y, classes=np.asarray(images.classes))
    return Path(dest)


def fetch_image_set(url: str, sha256: str, dest: str | os.PathLike, *, size: int, mode: str = "RGB",
                    **fetch_kw) -> Path:
    """Download ``url`` (an ``.npz`` or an archive of an image folder), verify it, write ``dest`` (.npz).

    ``sha256`` is required: a real benchmark is only read from a file whose digest is known. The
    archive may hold the class folders at its top or under one top folder (``cifar100/<class>/``).
    """
    if not sha256:
        raise ValueError(f"{url}: a sha256 is required to fetch an image set")
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # The download lands under a name fixed by dest and the URL, so the <name>.part of a cut transfer is
    # found and resumed by the next run (a temporary folder's random name never was); the file itself is
    # only the source of dest, removed once dest is written or the data is refused.
    raw = download_path(url, dest)
    got = fetch_url(url, raw, sha256=sha256, **fetch_kw)
    try:
        if got.name.endswith(".npz"):
            images = read_npz(got)
        else:
            with tempfile.TemporaryDirectory(prefix=f".{dest.stem}.", dir=dest.parent) as work:
                root = safe_extract(got, Path(work) / "unpacked")
                entries = [p for p in root.iterdir() if not p.name.startswith(".")]
                if len(entries) == 1 and entries[0].is_dir() and any(q.is_dir() for q in entries[0].iterdir()):
                    root = entries[0]
                images = read_image_folder(root, size, mode)
        return write_npz(images, dest)
    finally:
        got.unlink(missing_ok=True)


def download_path(url: str, dest: str | os.PathLike) -> Path:
    """Where :func:`fetch_image_set` downloads ``url`` for ``dest``: ``.<dest name>.<URL's file name>`` beside it
    (hidden; the name keeps the URL's suffixes, which choose the archive format), its bytes in progress
    in that name plus ``.part``."""
    dest = Path(dest)
    name = Path(url.split("?")[0]).name or "download"
    return dest.with_name(f".{dest.name}.{name}")
