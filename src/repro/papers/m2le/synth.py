"""Task sequences of the m2le rebuild: a base task (pretraining) and ``n_tasks`` continual tasks.

Every task is 10-way classification read through the frozen backbone's shared head; a task may
restrict the answer to its own classes (``classes``), as split digits does (task-incremental).

- ``blocks`` (synthetic, planted interference): inputs have ``n_blocks`` feature blocks. Task ``i``
  draws inputs that are zero outside one *shared* block and its own *private* block, and labels
  them with its own random linear teacher. A task's gradient on the first layer is non-zero only
  on the columns of those two blocks, so its curvature is planted: later tasks move the shared
  columns that earlier tasks need (interference a merge must weigh) and their private columns,
  which no earlier task uses (where an element-wise merge can keep the whole update and a scalar
  merge cannot). The base task uses every block.
- ``split_digits``: scikit-learn digits, classes split into ``n_tasks`` groups (2 classes each for
  5 tasks); base task: all digits under a fixed random pixel permutation.
- ``perm_digits``: every task is all 10 digits under its own random pixel permutation (the
  classic permuted-MNIST sequence, on 8x8 digits); base task: a further permutation.

Each task has a train/test split; the seed fixes the split, permutations, teachers and task order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Task", "Sequence", "make_sequence", "SEQUENCES"]

SEQUENCES = ("blocks", "split_digits", "perm_digits")
N_CLASSES = 10


@dataclass
class Task:
    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    classes: tuple[int, ...] = tuple(range(N_CLASSES))


@dataclass
class Sequence:
    name: str
    base: Task
    tasks: list[Task]
    n_features: int


def _split(x, y, rng, test_frac, name, classes=tuple(range(N_CLASSES))) -> Task:
    order = rng.permutation(len(y))
    n_test = int(round(test_frac * len(y)))
    te, tr = order[:n_test], order[n_test:]
    f = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    g = lambda a: torch.as_tensor(a, dtype=torch.long)  # noqa: E731
    return Task(name, f(x[tr]), g(y[tr]), f(x[te]), g(y[te]), tuple(int(c) for c in classes))


def _digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    x = d.data / 16.0
    return (x - x.mean(0)) / (x.std(0) + 0.1), d.target


def _blocks(n_tasks, rng, *, n_blocks=None, block_dim=8, n_per_task=600, test_frac=0.3, label_noise=0.0):
    n_blocks = n_blocks or n_tasks + 1
    if n_blocks < 2:
        raise ValueError("blocks: n_blocks must be >= 2 (one shared block and private ones)")
    dim = n_blocks * block_dim

    def task(support, name):
        x = np.zeros((n_per_task, dim))
        cols = np.concatenate([np.arange(b * block_dim, (b + 1) * block_dim) for b in support])
        x[:, cols] = rng.normal(size=(n_per_task, len(cols)))
        teacher = rng.normal(size=(dim, N_CLASSES))
        y = (x @ teacher).argmax(1)
        flip = rng.random(n_per_task) < label_noise
        y[flip] = rng.integers(0, N_CLASSES, flip.sum())
        return _split(x, y, rng, test_frac, name)

    base = task(range(n_blocks), "base")
    private = [1 + (i % (n_blocks - 1)) for i in range(n_tasks)]
    return Sequence("blocks", base, [task((0, p), f"task{i}") for i, p in enumerate(private)], dim)


def _split_digits(n_tasks, rng, test_frac=0.3):
    x, y = _digits()
    if not 2 <= n_tasks <= 5:
        raise ValueError(f"split_digits: n_tasks must be 2..5 (10 classes, >= 2 per task); got {n_tasks}")
    base = _split(x[:, rng.permutation(x.shape[1])], y, rng, test_frac, "base")
    groups = np.array_split(rng.permutation(N_CLASSES), n_tasks)
    tasks = [_split(x[np.isin(y, g)], y[np.isin(y, g)], rng, test_frac, f"task{i}", sorted(g))
             for i, g in enumerate(groups)]
    return Sequence("split_digits", base, tasks, x.shape[1])


def _perm_digits(n_tasks, rng, test_frac=0.3, n_per_task=None):
    x, y = _digits()
    base = _split(x[:, rng.permutation(x.shape[1])], y, rng, test_frac, "base")
    tasks = []
    for i in range(n_tasks):
        rows = rng.permutation(len(y))[: n_per_task or len(y)]
        tasks.append(_split(x[rows][:, rng.permutation(x.shape[1])], y[rows], rng, test_frac, f"task{i}"))
    return Sequence("perm_digits", base, tasks, x.shape[1])


def make_sequence(name: str, n_tasks: int, seed: int, **kw) -> Sequence:
    """The sequence ``name`` with ``n_tasks`` tasks, drawn from ``seed`` (same seed, same tasks)."""
    makers = {"blocks": _blocks, "split_digits": _split_digits, "perm_digits": _perm_digits}
    if name not in makers:
        raise ValueError(f"unknown m2le sequence {name!r}; known: {', '.join(SEQUENCES)}")
    if n_tasks < 2:
        raise ValueError(f"m2le sequence {name}: n_tasks must be >= 2; got {n_tasks}")
    return makers[name](n_tasks, np.random.default_rng(seed), **kw)
