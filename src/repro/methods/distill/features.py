"""Frozen-encoder features of an image-caption corpus, cached in one HDF5 file.

Layout of ``results/mdadd/features/<dataset>.h5``: for each split ``s`` in (train, test) the
datasets ``/<s>/image`` float32 (N_s, 1280) (EfficientNet-Lite0), ``/<s>/text`` float32 (C_s, 384)
(all-MiniLM-L6-v2) and ``/<s>/caption_image`` int64 (C_s,) (the row of ``image`` each caption
describes); file attrs ``image_encoder``, ``text_encoder``, ``image_size``, ``dataset``.
The val split of a Karpathy file is not used (no model selection is done on it).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass

import numpy as np

from repro.data.captions import ImageCaptionCorpus
from repro.io import atomic_path

__all__ = ["SplitFeatures", "encode_corpus", "write_features", "read_features"]

log = logging.getLogger(__name__)


@dataclass
class SplitFeatures:
    """Features of one split: images, captions and caption -> image index."""

    image: np.ndarray  # (N, Dx) float32
    text: np.ndarray  # (C, Dt) float32
    caption_image: np.ndarray  # (C,) int64

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """All (image, caption) training pairs: one per caption; (C, Dx), (C, Dt)."""
        return self.image[self.caption_image], self.text


def encode_corpus(corpus: ImageCaptionCorpus, *, image_size: int, splits=("train", "test"),
                  batch_size: int = 16, device: str = "cpu") -> dict[str, SplitFeatures]:
    """Encode every image (EfficientNet-Lite0) and caption (MiniLM) of ``splits``."""
    from repro.logs import progress
    from repro.nn.encoders_offline import encode_images, encode_texts, load_efficientnet_lite0, load_minilm

    img_model, txt_model = load_efficientnet_lite0(device), load_minilm(device)
    out = {}
    for s in splits:
        idx = np.flatnonzero(corpus.split == s)
        if idx.size == 0:
            raise ValueError(f"corpus has no images in split {s!r}")
        remap = -np.ones(corpus.n_images, np.int64)
        remap[idx] = np.arange(idx.size)
        cap = np.flatnonzero(remap[corpus.caption_image] >= 0)
        source = corpus.images if corpus.images is not None else corpus.image_paths
        chunks = [idx[i:i + 256] for i in range(0, idx.size, 256)]
        image = np.concatenate([encode_images(img_model, [source[j] for j in c], size=image_size,
                                              batch_size=batch_size, device=device)
                                for c in progress(chunks, desc=f"images {s}", unit="chunk")])
        text = encode_texts(txt_model, [corpus.captions[c] for c in cap])
        out[s] = SplitFeatures(image=image, text=text, caption_image=remap[corpus.caption_image[cap]])
        log.info("split %s: %d images, %d captions encoded", s, idx.size, cap.size)
    return out


def write_features(path: str | os.PathLike, feats: dict[str, SplitFeatures], **attrs) -> None:
    """Write ``feats`` to HDF5 (atomically), with ``attrs`` as file attributes."""
    import h5py

    with atomic_path(path) as tmp, h5py.File(tmp, "w") as h5:
        for s, f in feats.items():
            g = h5.create_group(s)
            g["image"], g["text"], g["caption_image"] = f.image, f.text, f.caption_image
        for k, v in attrs.items():
            h5.attrs[k] = v if isinstance(v, (int, float, str)) else json.dumps(v)


def read_features(path: str | os.PathLike) -> dict[str, SplitFeatures]:
    """Read a feature file written by :func:`write_features`."""
    import h5py

    try:
        with h5py.File(path, "r") as h5:
            return {s: SplitFeatures(image=h5[s]["image"][:], text=h5[s]["text"][:],
                                     caption_image=h5[s]["caption_image"][:]) for s in h5}
    except (OSError, KeyError, RuntimeError) as err:  # RuntimeError: h5py on a damaged object header
        raise ValueError(f"{path}: not a caption feature file (truncated or corrupted: {err}); delete it to rebuild"
                         ) from None
