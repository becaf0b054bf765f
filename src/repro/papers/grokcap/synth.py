"""grokcap's ground truth: modular arithmetic datasets and random-label twins of equal size and entropy.

Data of "Model Capacity Determines Grokking through Competing Memorisation and Generalisation
Speeds" (arXiv 2605.09724), after Power et al. (2022): every equation ``a op b = c (mod p)`` is the
4-token sequence ``[a, OP, b, EQ]`` over a vocabulary of ``p + 2`` tokens (the residues, then the
operator token ``p`` and the equals token ``p + 1``); the target is ``c``.

- :func:`modular_table`: the full table, each pair (a, b) exactly once (``b != 0`` for division).
- :func:`split`: a seeded random train/validation split by fraction (the paper uses 0.5).
- :func:`reference_random_data`: the random-label data of the paper's code on which T_mem is
  measured (``data.modular.random_target_data_torch`` called with ``n_equiv`` samples):
  ``n_equiv = floor(train_fraction * |table|)`` fresh sequences, all four tokens and the label
  uniform over the ``p + 2`` tokens, so ``n log2(p + 2)`` bits of label information.
- :func:`random_label_like`: our earlier random-label twin of a training set: the same inputs and
  the same label multiset, with the labels permuted among the inputs, so size and (empirical)
  label entropy are exactly equal while the labels carry no rule that could be learned.
- :func:`random_sequences`: uniform random 4-token inputs with uniform labels over ``p + 2``
  tokens (the reference's random data; also the capacity runs' data).
- :func:`seed_dataset` and :func:`task_data`: one seed replicate's arrays (an ``.npz`` file of the
  workflow) and the train/validation data of each run drawn from them; the model and its training
  (:mod:`repro.methods.grokking`) take these arrays, not this module's types.

Random-label data for T_mem (the preset's ``labels``)
-----------------------------------------------------
- ``reference`` (every preset): :func:`reference_random_data`, as the paper's code. Its inputs are
  random too, so nothing about them is shared with the modular task.
- ``permute`` (our earlier default): the modular training inputs with their labels permuted, which
  makes the label entropy *equal*, not only equal in expectation, but keeps the structured inputs;
  a review against the reference code found it memorised 2-3x more slowly than the reference's data.
- ``uniform``: the modular training inputs with i.i.d. labels over the ``p`` residues.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["ModularData", "OPERATIONS", "LABELS", "modular_table", "split", "random_label_like", "random_sequences",
           "reference_random_data", "n_equiv", "label_entropy_bits", "seed_dataset", "task_data"]

#: Kinds of random-label data for T_mem (module docstring).
LABELS = ("reference", "permute", "uniform")


def _divide(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    inv = np.array([pow(int(x), p - 2, p) for x in range(p)])  # Fermat inverse; index 0 unused
    return (a * inv[b]) % p


#: operation name -> (c(a, b, p), whether b = 0 is excluded)
OPERATIONS = {
    "add": (lambda a, b, p: (a + b) % p, False),
    "sub": (lambda a, b, p: (a - b) % p, False),
    "mul": (lambda a, b, p: (a * b) % p, False),
    "div": (_divide, True),
}


@dataclass(frozen=True)
class ModularData:
    """Token sequences ``x`` (n, 4) int64 and targets ``y`` (n,) int64 over ``n_tokens`` symbols."""

    x: np.ndarray
    y: np.ndarray
    n_tokens: int

    def __len__(self) -> int:
        return len(self.y)

    def subset(self, idx: np.ndarray) -> "ModularData":
        return ModularData(self.x[idx], self.y[idx], self.n_tokens)


def _check_prime(p: int) -> None:
    if p < 3 or any(p % k == 0 for k in range(2, int(p**0.5) + 1)):
        raise ValueError(f"modular: p must be a prime >= 3, got {p}")


def modular_table(p: int, operation: str = "div") -> ModularData:
    """All equations ``a op b = c (mod p)``, each pair (a, b) once, as ``[a, p, b, p + 1] -> c``.

    Parameters
    ----------
    p : int
        The prime modulus.
    operation : {"div", "add", "sub", "mul"}
        Division excludes ``b = 0`` (p (p - 1) pairs); the others have p^2 pairs.
    """
    _check_prime(p)
    if operation not in OPERATIONS:
        raise ValueError(f"modular: unknown operation {operation!r}; known: {', '.join(OPERATIONS)}")
    fn, no_zero = OPERATIONS[operation]
    a, b = np.meshgrid(np.arange(p), np.arange(1 if no_zero else 0, p), indexing="ij")
    a, b = a.ravel(), b.ravel()
    x = np.stack([a, np.full_like(a, p), b, np.full_like(a, p + 1)], axis=1).astype(np.int64)
    return ModularData(x, fn(a, b, p).astype(np.int64), n_tokens=p + 2)


def split(data: ModularData, train_fraction: float, seed: int) -> tuple[ModularData, ModularData]:
    """Seeded random split: ``round(train_fraction * n)`` examples train, the rest validation."""
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"modular: train_fraction must lie in (0, 1), got {train_fraction}")
    n = len(data)
    n_train = int(round(train_fraction * n))
    if n_train < 1 or n_train >= n:
        raise ValueError(f"modular: train_fraction {train_fraction} leaves an empty split of {n} examples")
    perm = np.random.default_rng(seed).permutation(n)
    return data.subset(np.sort(perm[:n_train])), data.subset(np.sort(perm[n_train:]))


def random_label_like(data: ModularData, seed: int, labels: str = "permute", n_classes: int | None = None) -> ModularData:
    """The random-label twin of ``data``: same inputs and size, labels with no learnable rule.

    ``labels="permute"`` shuffles the labels among the inputs (same label histogram, hence the same
    empirical entropy); ``labels="uniform"`` draws them i.i.d. uniform over ``n_classes`` (default:
    the residues ``0..p-1``, i.e. ``n_tokens - 2``).
    """
    rng = np.random.default_rng(seed)
    if labels == "permute":
        y = rng.permutation(data.y)
    elif labels == "uniform":
        y = rng.integers(0, n_classes or data.n_tokens - 2, size=len(data)).astype(np.int64)
    else:
        raise ValueError(f"modular: labels must be 'permute' or 'uniform', got {labels!r}")
    return ModularData(data.x.copy(), y, data.n_tokens)


def random_sequences(n: int, p: int, seed: int, seq_len: int = 4) -> ModularData:
    """``n`` uniform random sequences over ``p + 2`` tokens with uniform labels over ``p + 2`` tokens."""
    if n < 1:
        raise ValueError(f"modular: n must be positive, got {n}")
    rng = np.random.default_rng(seed)
    x = rng.integers(0, p + 2, size=(n, seq_len)).astype(np.int64)
    y = rng.integers(0, p + 2, size=n).astype(np.int64)
    return ModularData(x, y, n_tokens=p + 2)


def n_equiv(p: int, operation: str = "div", train_fraction: float = 0.5) -> int:
    """Size of the reference's random-label data: ``floor(train_fraction * |table|)``.

    ``|table|`` is ``p (p - 1)`` for division and ``p^2`` otherwise, so for division at 0.5 this is
    ``floor(0.5 p (p - 1))``, the size of the modular training split (the reference's
    ``compute_dataset_size_bits``).
    """
    _check_prime(p)
    if operation not in OPERATIONS:
        raise ValueError(f"modular: unknown operation {operation!r}; known: {', '.join(OPERATIONS)}")
    size = p * (p - 1) if OPERATIONS[operation][1] else p * p
    return int(math.floor(train_fraction * size))


def reference_random_data(p: int, operation: str, train_fraction: float, seed: int) -> ModularData:
    """The reference's random-label data of equivalent complexity (T_mem's data).

    ``n_equiv(p, operation, train_fraction)`` sequences, every one of the four tokens and the
    label drawn uniformly from the ``p + 2`` tokens: ``n log2(p + 2)`` bits of labels.
    """
    return random_sequences(n_equiv(p, operation, train_fraction), p, seed)


def label_entropy_bits(y: np.ndarray) -> float:
    """Empirical (plug-in) entropy of the labels ``y`` in bits."""
    _, counts = np.unique(y, return_counts=True)
    freq = counts / counts.sum()
    return float(-(freq * np.log2(freq)).sum())


def seed_dataset(*, p: int, operation: str, train_fraction: float, seed: int, labels: str = "reference"
                 ) -> dict[str, np.ndarray]:
    """The data of one seed replicate, as arrays for an ``.npz`` file.

    Holds the train/validation split of the modular table (``train_x``, ``train_y``, ``val_x``,
    ``val_y``), the random-label data of kind ``labels`` (``random_x``, ``random_y``, and
    ``random_classes``, the number of classes its labels are drawn from), the vocabulary size and
    ``seed``, from which capacity runs draw their random sequences.
    """
    train, val = split(modular_table(p, operation), train_fraction, seed)
    if labels == "reference":
        rand, classes = reference_random_data(p, operation, train_fraction, seed + 1), p + 2
    elif labels in LABELS:
        rand, classes = random_label_like(train, seed + 1, labels=labels), p
    else:
        raise ValueError(f"modular: labels must be one of {', '.join(LABELS)}, got {labels!r}")
    return {"train_x": train.x, "train_y": train.y, "val_x": val.x, "val_y": val.y, "random_x": rand.x,
            "random_y": rand.y, "random_classes": np.int64(classes), "n_tokens": np.int64(train.n_tokens),
            "p": np.int64(p), "seed": np.int64(seed)}


def task_data(task: str, arrays: dict[str, np.ndarray], n_capacity: int = 0) -> tuple[ModularData, ModularData | None]:
    """Train (and validation) data of one run from a seed's arrays (:func:`seed_dataset`).

    ``modular``: the split (validation measures T_gen). ``random``: the seed's random-label data
    (T_mem; :func:`seed_dataset`). ``capacity``: ``n_capacity`` random sequences drawn from the
    seed's stream (bits memorised). Only ``modular`` has validation data.
    """
    V = int(arrays["n_tokens"])
    if task == "modular":
        return ModularData(arrays["train_x"], arrays["train_y"], V), ModularData(arrays["val_x"], arrays["val_y"], V)
    if task == "random":
        return ModularData(arrays["random_x"], arrays["random_y"], V), None
    if task == "capacity":
        return random_sequences(n_capacity, int(arrays["p"]), int(arrays["seed"]) + 2), None
    raise ValueError(f"modular: unknown task {task!r}; known: modular, random, capacity")
