"""Real image-caption corpora: Flickr30K and MS-COCO in the Karpathy split format.

Karpathy & Fei-Fei (CVPR 2015) published one JSON per dataset (``dataset_flickr30k.json``,
``dataset_coco.json`` in ``caption_datasets.zip``)::

    {"dataset": "flickr30k",
     "images": [{"filename": "1000092795.jpg", "filepath": "val2014" (COCO only),
                 "split": "train" | "val" | "test" | "restval",
                 "sentences": [{"raw": "Two young guys ...", "tokens": [...]}, ...]}, ...]}

:func:`load_karpathy` reads such a JSON and an image folder (``<image_root>/<filepath>/<filename>``)
into :class:`~repro.data.captions.ImageCaptionCorpus` (image paths, not pixels; the feature
stage decodes them). ``restval`` is folded into ``train``, as in the usual 113k-image COCO
training set and in LoRS / CovMatch. :func:`fetch_dataset` downloads the archives of a manifest
(``source: remote``), each by :func:`fetch_archive` through :mod:`repro.data.fetch` (retries, resume,
a required sha256, an atomic rename), unpacks them beside the dataset's folder and renames the JSON
and the image folder into place once whole; ``source: local`` points at a folder where the user has
put the JSON and the images.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from repro.data.captions import ImageCaptionCorpus

__all__ = ["load_karpathy", "fetch_archive", "fetch_dataset", "KARPATHY_SPLITS"]

log = logging.getLogger(__name__)

KARPATHY_SPLITS = {"train": "train", "restval": "train", "val": "val", "test": "test"}


def load_karpathy(json_path: str | os.PathLike, image_root: str | os.PathLike, *,
                  max_images: dict[str, int] | None = None, check_files: bool = True) -> ImageCaptionCorpus:
    """Read a Karpathy-split JSON and its image folder.

    Parameters
    ----------
    json_path : path
        ``dataset_flickr30k.json`` or ``dataset_coco.json``.
    image_root : path
        Folder holding the images (``<image_root>/<filepath>/<filename>``; Flickr30K has no filepath).
    max_images : dict, optional
        Keep at most this many images per split (``{"train": 2000, "test": 500}``), first in file order.
    check_files : bool
        Raise a ``ValueError`` naming the first missing image file.
    """
    json_path, image_root = Path(json_path), Path(image_root)
    try:
        with open(json_path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{json_path}: cannot read the Karpathy split file: {err}") from None
    if not isinstance(doc, dict) or "images" not in doc:
        raise ValueError(f"{json_path}: no 'images' list (not a Karpathy split file)")
    counts: dict[str, int] = {}
    paths, split, captions, owner = [], [], [], []
    for k, item in enumerate(doc["images"]):
        for key in ("filename", "split", "sentences"):
            if key not in item:
                raise ValueError(f"{json_path}: image entry {k} has no {key!r}")
        if item["split"] not in KARPATHY_SPLITS:
            raise ValueError(f"{json_path}: image entry {k} has unknown split {item['split']!r}")
        s = KARPATHY_SPLITS[item["split"]]
        if max_images is not None and counts.get(s, 0) >= max_images.get(s, float("inf")):
            continue
        counts[s] = counts.get(s, 0) + 1
        path = image_root / item.get("filepath", "") / item["filename"]
        if check_files and not path.is_file():
            raise ValueError(f"{json_path}: image {path} is missing")
        idx = len(paths)
        paths.append(str(path))
        split.append(s)
        for sent in item["sentences"]:
            captions.append(sent["raw"].strip())
            owner.append(idx)
    log.info("%s: %s images, %d captions", json_path.name, counts, len(captions))
    return ImageCaptionCorpus(captions=captions, caption_image=np.asarray(owner, np.int64),
                              split=np.asarray(split), image_paths=paths)


def fetch_archive(url: str, dest: str | os.PathLike, *, sha256: str | None, **fetch_kw) -> Path:
    """Download ``url`` to ``dest`` through :func:`repro.data.fetch.fetch_url`.

    The download retries, resumes a cut transfer from ``<dest>.part`` on the next run, checks the
    sha256 and renames atomically (``fetch_kw``: ``retries``, ``timeout``, ``backoff``). Every
    download is checked: an archive without a ``sha256`` is refused before anything is fetched. A
    failure is a ``ValueError`` naming the URL (a checksum mismatch names both digests and leaves
    nothing at ``dest``), and leaves no empty folder behind.
    """
    from repro.data.fetch import FetchError, fetch_url

    if not sha256:
        raise ValueError(f"{url}: no sha256 given; every download is checked, so give the archive's sha256 "
                         "(sha256sum of the file) beside its url")
    dest = Path(dest)
    created = not dest.parent.exists()
    try:
        fetch_url(url, dest, sha256=sha256, **fetch_kw)
    except FetchError as err:
        raise ValueError(str(err)) from None
    finally:
        if created and dest.parent.is_dir() and not any(dest.parent.iterdir()):
            dest.parent.rmdir()  # nothing arrived: no empty folder (a partial file stays, to be resumed)
    return dest


def fetch_dataset(archives: list[dict], root: str | os.PathLike, members: Iterable[str | os.PathLike], *,
                  where: str = "the archives", **fetch_kw) -> list[Path]:
    """Download the archives of a ``source: remote`` manifest and put ``members`` of what they unpack in place.

    Parameters
    ----------
    archives : list of dict
        ``{url, sha256}`` each; every one must give its sha256 (checked before anything is fetched).
    root : path
        The dataset's folder: the archives unpack as if into it, in order, into one tree (a later
        archive's file replaces an earlier one's of the same path).
    members : paths under ``root``
        What is kept: the Karpathy JSON and the image folder (``resources/mdadd/flickr30k/flickr30k-images``).
        Everything else the archives hold (the other datasets' split files) is dropped.
    where : str
        The manifest's name for messages (``mdadd.paper.data.archives``).
    fetch_kw
        ``retries``, ``timeout``, ``backoff`` of :func:`repro.data.fetch.fetch_url`.

    Each archive is downloaded by :func:`fetch_archive` into ``root/archives/`` (a cut transfer stays
    there as ``<name>.part``, for the next run to resume), unpacked by
    :func:`repro.data.fetch.safe_extract` (tar or zip, members that would land outside refused) into
    the staging folder ``root/.unpacking`` and deleted. Only once every archive is unpacked and every
    member found is each member renamed onto its final name (:func:`repro.io.atomic_path`), so an
    error, or a job killed, part-way leaves no half-filled member under its name. The staging folder
    is removed at the end, and at the start of the next run if a killed job left it (the folder has
    one writer). An archive that will not unpack is a ``ValueError`` naming its URL; so is a member
    no archive holds, naming ``where``.
    """
    from repro.data.fetch import FetchError, safe_extract
    from repro.io import atomic_path

    root = Path(root)
    targets = [Path(m) for m in members]
    for target in targets:
        if root not in target.parents:
            raise ValueError(f"{target} is not under {root}, where {where} unpack")
    for archive in archives:  # every download is checked: refuse the manifest before fetching any of it
        if not archive.get("sha256"):
            raise ValueError(f"{archive.get('url')}: no sha256 given in {where}; every download is checked, so give "
                             "the archive's sha256 (sha256sum of the file) beside its url")
    downloads, staging = root / "archives", root / ".unpacking"
    tree = staging / "tree"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for k, archive in enumerate(archives):
            url = archive["url"]
            got = fetch_archive(url, downloads / Path(url).name, sha256=archive["sha256"], **fetch_kw)
            try:
                unpacked = safe_extract(got, staging / f"archive{k}")
            except (FetchError, OSError, EOFError, tarfile.TarError, zipfile.BadZipFile) as err:
                raise ValueError(f"{url}: cannot unpack the downloaded archive: {err}") from err
            finally:
                got.unlink(missing_ok=True)  # unpacked or refused, the archive itself is not kept
            shutil.copytree(unpacked, tree, symlinks=True, copy_function=os.replace, dirs_exist_ok=True)
            shutil.rmtree(unpacked)
        missing = [str(t.relative_to(root)) for t in targets if not os.path.lexists(tree / t.relative_to(root))]
        if missing:
            raise ValueError(f"{where} ({', '.join(a['url'] for a in archives)}) hold no {', '.join(missing)} "
                             f"(under {root}/ once unpacked)")
        for target in targets:
            with atomic_path(target) as staged:
                staged.unlink()
                os.replace(tree / target.relative_to(root), staged)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        with contextlib.suppress(OSError):
            downloads.rmdir()  # left empty once every archive is unpacked; kept while it holds a partial download
    return targets
