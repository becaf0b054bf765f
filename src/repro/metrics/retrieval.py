"""Cross-modal retrieval recall: TR@K (image -> text) and IR@K (text -> image).

Conventions of Flickr30K / COCO retrieval (Karpathy & Fei-Fei 2015; used by LoRS and CovMatch):
each test image has several captions; TR@K is the share of images for which *some* of their
captions is among the K captions ranked highest, IR@K the share of captions whose image is among
the K images ranked highest. Recalls are in percent.

Tie rule (pessimistic): a wrong item whose similarity *equals* that of the correct one is ranked
above it. The rank of image i in TR is ``1 + #{captions c not of i : s[i, c] >= max_{c' of i} s[i, c']}``,
the rank of caption c in IR is ``1 + #{images j != img(c) : s[j, c] >= s[img(c), c]}``. A constant
similarity matrix therefore scores 0 at every K smaller than the number of wrong items, never
chance level by luck of the sort order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["retrieval_ranks", "retrieval_recall"]


def retrieval_ranks(sim: np.ndarray, caption_image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1-based ranks of the correct item for each image (TR) and each caption (IR).

    Parameters
    ----------
    sim : (N, C) array
        Similarity of image i and caption c.
    caption_image : (C,) int array
        The image each caption describes.
    """
    sim = np.asarray(sim, dtype=np.float64)
    caption_image = np.asarray(caption_image)
    n, c = sim.shape
    if caption_image.shape != (c,):
        raise ValueError(f"caption_image has shape {caption_image.shape}, expected ({c},)")
    if c and (caption_image.min() < 0 or caption_image.max() >= n):
        raise ValueError("caption_image points outside the similarity matrix's rows")
    own = np.zeros((n, c), bool)
    own[caption_image, np.arange(c)] = True
    if not own.any(axis=1).all():
        raise ValueError("every image needs at least one caption")
    best_own = np.where(own, sim, -np.inf).max(axis=1)  # (N,)
    tr_rank = 1 + ((sim >= best_own[:, None]) & ~own).sum(axis=1)
    correct = sim[caption_image, np.arange(c)]  # (C,)
    ir_rank = 1 + ((sim >= correct[None, :]) & ~own).sum(axis=0)
    return tr_rank, ir_rank


def retrieval_recall(sim: np.ndarray, caption_image: np.ndarray, ks=(1, 5, 10)) -> dict[str, float]:
    """``{"TR@1": ..., "IR@1": ..., ...}`` in percent, and ``mR``, the mean of all of them."""
    tr_rank, ir_rank = retrieval_ranks(sim, caption_image)
    out = {}
    for k in ks:
        out[f"TR@{k}"] = 100.0 * float(np.mean(tr_rank <= k))
    for k in ks:
        out[f"IR@{k}"] = 100.0 * float(np.mean(ir_rank <= k))
    out["mR"] = float(np.mean(list(out.values())))
    return out
