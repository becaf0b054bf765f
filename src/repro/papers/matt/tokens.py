"""Source and target tokenisers, byte offsets, and the segments AIM aligns.

- :func:`train_source_tokenizer`: a byte-level BPE (``tokenizers``) learned on English, the tiny
  source model's tokenizer (SmolLM2's own is used at small scale; both are GPT-2 style byte level).
- :func:`extend_tokenizer`: the target tokenizer: the source vocabulary and merges, then the tokens
  (and their merges) that a BPE learned on the target-language corpus adds, appended with new ids.
  Every source token keeps its id, so the source embeddings are copied and only new rows need an
  initialisation.
- :func:`byte_ends`: where each token ends, in bytes of the UTF-8 text (a byte-level token's string
  has one character per byte).
- :func:`align_segments`: the smallest spans where both tokenisations have a boundary, found by
  walking the two lists of token ends together (the reference code walks the two offset lists the
  same way; its spans are characters, ours bytes, which is the same partition whenever no two
  tokens split a character at the same byte, and finer otherwise).
"""

from __future__ import annotations

import json

__all__ = ["BOS", "EOS", "train_source_tokenizer", "extend_tokenizer", "byte_ends", "align_segments",
           "encode", "new_token_ids"]

BOS, EOS = "<|bos|>", "<|eos|>"


def _bpe(texts: list[str], vocab_size: int, special: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    return tok


def train_source_tokenizer(texts: list[str], vocab_size: int):
    """A byte-level BPE with special tokens BOS (id 0) and EOS (id 1), learned on ``texts``."""
    return _bpe(texts, vocab_size, [BOS, EOS])


def _merges(tok) -> list[tuple[str, str]]:
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]


def extend_tokenizer(source, texts: list[str], n_new: int):
    """The source tokenizer extended with up to ``n_new`` tokens learned by BPE on ``texts``.

    A BPE is learned on ``texts`` with ``len(source vocab) + n_new`` tokens; its merges whose result
    is not a source token are appended, in the order BPE learned them, after the source merges, and
    their results get ids after the source vocabulary. Returns the target tokenizer.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = dict(source.get_vocab())
    merges = _merges(source)
    learned = _bpe(texts, len(vocab) + n_new, [])
    added = 0
    for a, b in _merges(learned):
        if added >= n_new:
            break
        if a + b in vocab:
            continue
        if a not in vocab or b not in vocab:  # a part the source lacks and we did not add: skip its merge
            continue
        vocab[a + b] = len(vocab)
        merges.append((a, b))
        added += 1
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([t.content for t in source.get_added_tokens_decoder().values()])
    return tok


def new_token_ids(source, target) -> list[int]:
    """Ids of the target tokens the source vocabulary lacks (in id order)."""
    src = source.get_vocab()
    return sorted(i for t, i in target.get_vocab().items() if t not in src)


def encode(tok, text: str, bos_id: int | None) -> list[int]:
    """``text``'s ids, after ``bos_id`` when given."""
    ids = tok.encode(text, add_special_tokens=False).ids
    return ([bos_id] if bos_id is not None else []) + ids


def byte_ends(tok, ids: list[int]) -> list[int]:
    """For each (non-special) id, the byte offset in the UTF-8 text where its token ends."""
    out, pos = [], 0
    for i in ids:
        pos += len(tok.id_to_token(i))  # byte-level alphabet: one character per byte
        out.append(pos)
    return out


def align_segments(src_ends: list[int], tgt_ends: list[int]) -> list[tuple[int, int, int, int]]:
    """Segments ``(src_start, src_stop, tgt_start, tgt_stop)`` (token index ranges) of two
    tokenisations of one text, given each token's end offset: a segment closes at every offset where
    both have a token boundary, so segments are the smallest spans that both tokenise whole.
    """
    if (src_ends[-1] if src_ends else 0) != (tgt_ends[-1] if tgt_ends else 0):
        raise ValueError(f"the two tokenisations cover different lengths ({src_ends[-1:]} vs {tgt_ends[-1:]})")
    segments, i, j, si, sj = [], 0, 0, 0, 0
    while i < len(src_ends) and j < len(tgt_ends):
        if src_ends[i] == tgt_ends[j]:
            segments.append((si, i + 1, sj, j + 1))
            i, j = i + 1, j + 1
            si, sj = i, j
        elif src_ends[i] < tgt_ends[j]:
            i += 1
        else:
            j += 1
    return segments
