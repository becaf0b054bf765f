"""Initialisations of the new tokens' embeddings; source tokens keep their rows.

- ``mean`` (the floor): every new row is the mean of the source embedding rows.
- ``fvt`` (Fast Vocabulary Transfer, Gee et al. 2022): the mean of the source embeddings of the
  pieces the source tokenizer cuts the new token's bytes into.
- ``focus`` (Dobler and de Melo 2023): a new token's embedding is the sparsemax-weighted sum of
  the source embeddings of the overlapping tokens (tokens in both vocabularies), weighted by the
  cosine similarity of auxiliary embeddings trained on target-language text tokenised with the
  target tokenizer. FOCUS trains fastText for those; we use PPMI + truncated SVD of the token
  co-occurrence counts (deterministic, no fastText offline): a named deviation. A new token absent
  from the auxiliary corpus falls back to the mean (FOCUS: a random draw around the mean).

WECHSEL needs bilingual dictionaries and aligned word vectors, TokAlign token-alignment matrices
learned from parallel tokenisations; neither fits offline here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sparsemax", "mean_init", "fvt_init", "focus_init", "auxiliary_embeddings", "INITS"]


def sparsemax(z: np.ndarray) -> np.ndarray:
    """Sparsemax (Martins and Astudillo 2016) of a vector: the Euclidean projection onto the simplex."""
    z = np.asarray(z, dtype=float)
    srt = np.sort(z)[::-1]
    cum = np.cumsum(srt)
    k = np.arange(1, len(z) + 1)
    support = 1 + k * srt > cum
    kz = k[support][-1]
    tau = (cum[kz - 1] - 1) / kz
    return np.maximum(z - tau, 0.0)


def mean_init(source_emb: np.ndarray, n_new: int) -> np.ndarray:
    return np.repeat(source_emb.mean(0, keepdims=True), n_new, axis=0)


def fvt_init(source_emb: np.ndarray, pieces: list[list[int]]) -> np.ndarray:
    """Row k: the mean of ``source_emb[pieces[k]]`` (the source tokenisation of new token k)."""
    return np.stack([source_emb[p].mean(0) for p in pieces])


def auxiliary_embeddings(sequences: list[list[int]], vocab_size: int, dim: int, window: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """PPMI + SVD token embeddings from co-occurrence within ``window`` tokens; returns (vectors, seen).

    Counts are kept over the tokens that occur only (a large source vocabulary stays cheap); tokens
    that never occur get zero vectors and ``seen`` False.
    """
    seen_ids = np.unique(np.concatenate([np.asarray(s, dtype=np.int64) for s in sequences if len(s)]))
    local = np.full(vocab_size, -1)
    local[seen_ids] = np.arange(len(seen_ids))
    n = len(seen_ids)
    counts = np.zeros((n, n))
    for seq in sequences:
        s = local[np.asarray(seq, dtype=np.int64)]
        for d in range(1, window + 1):
            np.add.at(counts, (s[:-d], s[d:]), 1.0)
            np.add.at(counts, (s[d:], s[:-d]), 1.0)
    total = counts.sum()
    row, col = counts.sum(1, keepdims=True), counts.sum(0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(counts * total / (row * col))
    ppmi = np.where(np.isfinite(pmi) & (pmi > 0), pmi, 0.0)
    u, sv, _ = np.linalg.svd(ppmi, full_matrices=False)
    k = min(dim, n)
    vectors = np.zeros((vocab_size, dim))
    vectors[seen_ids, :k] = u[:, :k] * np.sqrt(sv[:k])
    seen = np.zeros(vocab_size, dtype=bool)
    seen[seen_ids] = counts.sum(1) > 0
    return vectors, seen


def focus_init(source_emb: np.ndarray, new_ids: list[int], overlap_ids: list[int], aux: np.ndarray,
               seen: np.ndarray) -> np.ndarray:
    """FOCUS rows for ``new_ids`` (target ids; ``overlap_ids`` are target ids that are also source ids,
    with the same id in both vocabularies)."""
    overlap = np.array([o for o in overlap_ids if seen[o]])
    fallback = source_emb.mean(0)
    if len(overlap) == 0:
        return np.repeat(fallback[None], len(new_ids), axis=0)
    ov = aux[overlap]
    ov = ov / np.maximum(np.linalg.norm(ov, axis=1, keepdims=True), 1e-12)
    rows = []
    for n in new_ids:
        if not seen[n]:
            rows.append(fallback)
            continue
        v = aux[n] / max(np.linalg.norm(aux[n]), 1e-12)
        w = sparsemax(ov @ v)
        rows.append(w @ source_emb[overlap])
    return np.stack(rows)


INITS = ("mean", "fvt", "focus")
