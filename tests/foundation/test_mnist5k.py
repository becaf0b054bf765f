import numpy as np

from repro.data.mnist5k import N_IMAGES, SIDE, load_mnist_5k


def test_mnist_5k_shapes_range_and_balance():
    s = load_mnist_5k()
    assert s.x.shape == (N_IMAGES, SIDE, SIDE, 1) and s.x.dtype == np.float32
    assert 0.0 <= s.x.min() and s.x.max() == 1.0
    assert np.bincount(s.y).tolist() == [500] * 10
    assert s.classes == [str(c) for c in range(10)]
    # real digits, not noise: a one (thin) has far less ink than an eight
    ink = s.x.reshape(N_IMAGES, -1).mean(axis=1)
    assert ink[s.y == 1].mean() < 0.6 * ink[s.y == 8].mean()
