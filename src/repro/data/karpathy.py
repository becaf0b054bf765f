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
training set and in LoRS / CovMatch. :func:`fetch_archive` downloads one archive of a manifest
(``source: remote``) through :mod:`repro.data.fetch` (retries, resume, a required sha256, an
atomic rename); ``source: local`` points at a folder where the user has put the JSON and the images.
"""

from __future__ import annotations

import json
import logging
import os
import zipfile
from pathlib import Path

import numpy as np

from repro.data.captions import ImageCaptionCorpus

__all__ = ["load_karpathy", "fetch_archive", "KARPATHY_SPLITS"]

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


def fetch_archive(url: str, dest: str | os.PathLike, *, sha256: str | None, extract_to: str | os.PathLike | None = None,
                  **fetch_kw) -> Path:
    """Download ``url`` to ``dest`` through :func:`repro.data.fetch.fetch_url`, optionally unzip it into ``extract_to``.

    The download retries, resumes a cut transfer from ``<dest>.part`` on the next run, checks the
    sha256 and renames atomically (``fetch_kw``: ``retries``, ``timeout``, ``backoff``). Every
    download is checked: an archive without a ``sha256`` is refused before anything is fetched. A
    failure is a ``ValueError`` naming the URL (a checksum mismatch names both digests and leaves
    nothing at ``dest``), and leaves no empty folder behind. Members that would escape
    ``extract_to`` are refused.
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
    if extract_to is not None:
        root = Path(extract_to).resolve()
        with zipfile.ZipFile(dest) as zf:
            for member in zf.namelist():
                target = (root / member).resolve()
                if root not in target.parents and target != root:
                    raise ValueError(f"{dest}: member {member!r} escapes {root}")
            zf.extractall(root)
    return dest
