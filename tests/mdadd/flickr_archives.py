"""Small archives in the layout of the real Flickr30K downloads, for the tests of ``source: remote``.

Karpathy's ``caption_datasets.zip`` holds the three split files at its top level (``dataset_coco.json``,
``dataset_flickr30k.json``, ``dataset_flickr8k.json``); the Flickr30K image archive
(``flickr30k-images.tar.gz``) holds one folder, ``flickr30k-images/``, of JPEG files named by Flickr id.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import numpy as np

#: (Flickr id, Karpathy split) of the images in the archives.
IMAGES = [(1000092795, "train"), (10002456, "train"), (1000268201, "restval"), (1000344755, "val"),
          (1000366164, "test"), (1000523639, "test")]


def _jpeg(seed: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(seed).integers(0, 255, (24, 32, 3), dtype=np.uint8)).save(buf, "JPEG")
    return buf.getvalue()


def _split_file(dataset: str) -> bytes:
    images = [{"filename": f"{fid}.jpg", "imgid": k, "split": split,
               "sentences": [{"raw": f"A scene {k}, caption {c}.", "tokens": []} for c in range(2)]}
              for k, (fid, split) in enumerate(IMAGES)]
    return json.dumps({"dataset": dataset, "images": images}).encode()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def caption_datasets_zip(folder: Path) -> Path:
    """``caption_datasets.zip``: the split files of Flickr30K, COCO and Flickr8K."""
    path = folder / "caption_datasets.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for dataset in ("coco", "flickr30k", "flickr8k"):
            zf.writestr(f"dataset_{dataset}.json", _split_file(dataset))
    return path


def images_tar_gz(folder: Path) -> Path:
    """``flickr30k-images.tar.gz``: ``flickr30k-images/<id>.jpg``."""
    path = folder / "flickr30k-images.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for k, (fid, _) in enumerate(IMAGES):
            data = _jpeg(k)
            info = tarfile.TarInfo(f"flickr30k-images/{fid}.jpg")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def images_zip_damaged_midway(folder: Path) -> Path:
    """``flickr30k-images.zip`` whose fourth image fails its CRC: unpacking it stops there, with three images
    written (the checksum given for it is its own, so the download is accepted)."""
    path = folder / "flickr30k-images.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for k, (fid, _) in enumerate(IMAGES):
            zf.writestr(f"flickr30k-images/{fid}.jpg", _jpeg(k))
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.infolist()[3]
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)  # the member's stored bytes
    raw[start + 100] ^= 0xFF
    path.write_bytes(bytes(raw))
    return path
