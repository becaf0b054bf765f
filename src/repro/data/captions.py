"""Paired image-caption corpora: the one container that every loader and generator returns.

:class:`ImageCaptionCorpus` holds images (pixels, ``images``, for generated data; or files,
``image_paths``, for real data), captions, which image each caption describes and a split per
image. The real loaders (:mod:`repro.data.karpathy`: Flickr30K, MS-COCO) and synthetic generators
(e.g. :mod:`repro.papers.mdadd.synth`) produce it, so feature extraction and everything downstream
is shared. :func:`save_corpus` / :func:`load_corpus` keep a corpus with pixels in one ``.npz``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from repro.io import atomic_path, load_npz

__all__ = ["ImageCaptionCorpus", "save_corpus", "load_corpus"]


@dataclass
class ImageCaptionCorpus:
    """Images, captions and which image each caption describes, with a split per image."""

    captions: list[str]
    caption_image: np.ndarray  # (C,) int64: index of the image caption c describes
    split: np.ndarray  # (N,) str: train / val / test (Karpathy splits; restval counts as train)
    images: np.ndarray | None = None  # (N, H, W, 3) uint8, synthetic data
    image_paths: list[str] | None = None  # real data: one file per image
    scenes: list[dict] = field(default_factory=list)  # synthetic ground truth, one per image

    def __post_init__(self) -> None:
        n = len(self.split)
        if self.images is None and self.image_paths is None:
            raise ValueError("ImageCaptionCorpus needs images or image_paths")
        if self.images is not None and len(self.images) != n:
            raise ValueError(f"{len(self.images)} images but {n} split labels")
        if self.image_paths is not None and len(self.image_paths) != n:
            raise ValueError(f"{len(self.image_paths)} image paths but {n} split labels")
        if len(self.captions) != len(self.caption_image):
            raise ValueError("captions and caption_image differ in length")
        if len(self.caption_image) and (self.caption_image.min() < 0 or self.caption_image.max() >= n):
            raise ValueError("caption_image points outside the images")

    @property
    def n_images(self) -> int:
        return len(self.split)


def save_corpus(path: str | os.PathLike, corpus: ImageCaptionCorpus) -> None:
    """Save a synthetic corpus (pixels, captions, scenes) as one ``.npz``."""
    if corpus.images is None:
        raise ValueError("save_corpus stores pixels; a real corpus is read from its JSON and folder instead")
    with atomic_path(path) as tmp:
        np.savez_compressed(tmp, images=corpus.images, captions=np.asarray(corpus.captions),
                            caption_image=corpus.caption_image, split=corpus.split,
                            scenes=np.asarray(json.dumps(corpus.scenes)))


def load_corpus(path: str | os.PathLike) -> ImageCaptionCorpus:
    z = load_npz(path, ["captions", "caption_image", "split", "images", "scenes"])
    return ImageCaptionCorpus(captions=[str(c) for c in z["captions"]], caption_image=z["caption_image"],
                              split=z["split"].astype(str), images=z["images"], scenes=json.loads(str(z["scenes"])))
