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
- ``shapes`` (generated images): 60 classes, each a (shape, colour, texture) of 6 x 5 x 2, drawn as
  ``image_size`` x ``image_size`` RGB images with random position, size, brightness and pixel noise.
  A class split like ``remote``'s: 10 classes form the base task, the next ``n_tasks`` groups of
  ``classes_per_task`` the tasks (10 tasks of 5 at small).
- ``remote``: a real image benchmark (an image folder with one subfolder per class, e.g. CIFAR-100
  or ImageNet-R, or an ``.npz``), fetched and checked by sha256 (``repro.data.image_folder``) and
  split by class: the seed shuffles the classes, the first 10 form the base task and the next
  ``n_tasks`` groups of ``classes_per_task`` the tasks.

The class splits are evaluated task-incrementally: task ``i``'s classes are relabelled 0..k-1 and
read from the first k logits of the shared head (its task id is known at test time, as in split
digits); pixels are standardised per feature over the whole set.

Each task has a train/test split; the seed fixes the split, permutations, teachers and task order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Task", "Sequence", "make_sequence", "SEQUENCES"]

SEQUENCES = ("blocks", "split_digits", "perm_digits", "shapes", "remote")
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
    grid: tuple[int, int, int] | None = None
    """the flat inputs as an H x W x C image (row-major, channels last), for a patch backbone; None: no image"""
    patch: int | None = None
    """token side the sequence fixes (``blocks``: 1, one token per block); None: the backbone's patch"""


def _split(x, y, rng, test_frac, name, classes=tuple(range(N_CLASSES))) -> Task:
    order = rng.permutation(len(y))
    n_test = int(round(test_frac * len(y)))
    te, tr = order[:n_test], order[n_test:]
    f = lambda a: torch.as_tensor(a, dtype=torch.float32)
    g = lambda a: torch.as_tensor(a, dtype=torch.long)
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
    return Sequence("blocks", base, [task((0, p), f"task{i}") for i, p in enumerate(private)], dim,
                    grid=(n_blocks, 1, block_dim), patch=1)


def _split_digits(n_tasks, rng, test_frac=0.3):
    x, y = _digits()
    if not 2 <= n_tasks <= 5:
        raise ValueError(f"split_digits: n_tasks must be 2..5 (10 classes, >= 2 per task); got {n_tasks}")
    base = _split(x[:, rng.permutation(x.shape[1])], y, rng, test_frac, "base")
    groups = np.array_split(rng.permutation(N_CLASSES), n_tasks)
    tasks = [_split(x[np.isin(y, g)], y[np.isin(y, g)], rng, test_frac, f"task{i}", sorted(g))
             for i, g in enumerate(groups)]
    return Sequence("split_digits", base, tasks, x.shape[1], grid=(8, 8, 1))


def _perm_digits(n_tasks, rng, test_frac=0.3, n_per_task=None):
    x, y = _digits()
    base = _split(x[:, rng.permutation(x.shape[1])], y, rng, test_frac, "base")
    tasks = []
    for i in range(n_tasks):
        rows = rng.permutation(len(y))[: n_per_task or len(y)]
        tasks.append(_split(x[rows][:, rng.permutation(x.shape[1])], y[rows], rng, test_frac, f"task{i}"))
    return Sequence("perm_digits", base, tasks, x.shape[1], grid=(8, 8, 1))


def _class_split(name, x, y, n_tasks, rng, classes_per_task, test_frac=0.3, n_per_class=None):
    """Base task on 10 classes, then ``n_tasks`` tasks of ``classes_per_task`` further classes each."""
    n_classes = int(y.max()) + 1
    if not 2 <= classes_per_task <= N_CLASSES:
        raise ValueError(f"{name}: classes_per_task must be 2..{N_CLASSES} (the shared head); got {classes_per_task}")
    need = N_CLASSES + n_tasks * classes_per_task
    if need > n_classes:
        raise ValueError(f"{name}: {n_tasks} tasks of {classes_per_task} classes plus {N_CLASSES} base classes "
                         f"need {need} classes; the set has {n_classes}")
    grid = tuple(int(d) for d in x.shape[1:]) if x.ndim == 4 else None  # N x H x W x C images; N x D: none
    x = x.reshape(len(x), -1)
    x = (x - x.mean(0)) / (x.std(0) + 0.1)
    order = rng.permutation(n_classes)

    def task(classes, task_name):
        rows = np.concatenate([rng.permutation(np.flatnonzero(y == c))[:n_per_class] for c in classes])
        lookup = np.full(n_classes, -1)
        lookup[classes] = np.arange(len(classes))  # class classes[j] -> local label j
        local = lookup[y[rows]]
        return _split(x[rows], local, rng, test_frac, task_name, range(len(classes)))

    base = task(order[:N_CLASSES], "base")
    groups = order[N_CLASSES:need].reshape(n_tasks, classes_per_task)
    return Sequence(name, base, [task(g, f"task{i}") for i, g in enumerate(groups)], x.shape[1], grid=grid)


SHAPES = ("square", "disc", "ring", "cross", "triangle", "diamond")
COLOURS = np.array([[1, 0.15, 0.15], [0.15, 0.9, 0.15], [0.2, 0.3, 1], [1, 0.9, 0.1], [0.9, 0.2, 0.9]])
TEXTURES = ("solid", "stripes")


def _shape_mask(shape, size, rng):
    c = (size - 1) / 2 + rng.uniform(-1, 1, 2)
    r = rng.uniform(0.3, 0.45) * size
    yy, xx = np.mgrid[:size, :size].astype(float)
    dy, dx = yy - c[0], xx - c[1]
    d = np.hypot(dx, dy)
    return {"square": np.maximum(abs(dx), abs(dy)) <= 0.8 * r, "disc": d <= r,
            "ring": (d <= r) & (d >= r - max(1.2, 0.3 * r)),
            "cross": ((abs(dx) <= 0.25 * r) & (abs(dy) <= r)) | ((abs(dy) <= 0.25 * r) & (abs(dx) <= r)),
            "triangle": (dy <= r) & (abs(dx) <= (dy + r) / 2), "diamond": abs(dx) + abs(dy) <= r}[shape]


def shape_images(n_per_class: int, rng, image_size: int = 10, noise: float = 0.25):
    """Images (N x size x size x 3) and labels of the 60 (shape, colour, texture) classes."""
    xs, ys = [], []
    stripes = (np.arange(image_size) % 2 == 0)[:, None, None]
    for k, (s, c, t) in enumerate((s, c, t) for s in SHAPES for c in range(len(COLOURS)) for t in TEXTURES):
        for _ in range(n_per_class):
            mask = _shape_mask(s, image_size, rng)[..., None]
            fill = COLOURS[c] * rng.uniform(0.7, 1.0) * (np.where(stripes, 1.0, 0.3) if t == "stripes" else 1.0)
            xs.append(mask * fill + noise * rng.normal(size=(image_size, image_size, 3)))
            ys.append(k)
    return np.stack(xs), np.asarray(ys)


def _shapes(n_tasks, rng, classes_per_task=5, n_per_class=60, image_size=10, noise=0.25, test_frac=0.3):
    x, y = shape_images(n_per_class, rng, image_size, noise)
    return _class_split("shapes", x, y, n_tasks, rng, classes_per_task, test_frac)


def _remote(n_tasks, rng, path=None, classes_per_task=5, n_per_class=None, test_frac=0.3):
    from repro.data.image_folder import read_npz

    if path is None:
        raise ValueError("remote: no data file; the workflow fetches it (rule m2le_fetch) and passes its path")
    images = read_npz(path)
    return _class_split("remote", images.x, images.y, n_tasks, rng, classes_per_task, test_frac, n_per_class)


def make_sequence(name: str, n_tasks: int, seed: int, **kw) -> Sequence:
    """The sequence ``name`` with ``n_tasks`` tasks, drawn from ``seed`` (same seed, same tasks)."""
    makers = {"blocks": _blocks, "split_digits": _split_digits, "perm_digits": _perm_digits, "shapes": _shapes,
              "remote": _remote}
    if name not in makers:
        raise ValueError(f"unknown m2le sequence {name!r}; known: {', '.join(SEQUENCES)}")
    if n_tasks < 2:
        raise ValueError(f"m2le sequence {name}: n_tasks must be >= 2; got {n_tasks}")
    return makers[name](n_tasks, np.random.default_rng(seed), **kw)
