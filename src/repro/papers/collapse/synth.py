"""collapse's planted truth: a labelled Gaussian mixture whose smallest component is the one at risk.

The "real" distribution of the recursion is an isotropic Gaussian mixture in R^d with K components
of known weights, means evenly spaced on a circle of radius ``radius`` in the first two
coordinates (the others 0), and a known σ. With the default radius 8 and σ 1 neighbouring means of
4 components lie 11.3 σ apart, so the components are separated: a component's Fisher information
in its mean is π_k / σ² I (to within e^-16), the closed form the curvature-vs-weight measurement
is checked against, and a dead component does not merge with a live one (its stratum's RLCT is
(D - d)/2, see :mod:`repro.methods.gmm`). The ground truth a test can check: under pure
self-consumption the weights follow a Wright-Fisher-like drift, so the small planted component
(weight 0.05 at n = 200) is the first to go extinct, while the heavy ones persist.
"""

from __future__ import annotations

import numpy as np

from repro.methods.gmm import Mixture

__all__ = ["planted_mixture"]


def planted_mixture(weights, *, dim: int = 2, radius: float = 8.0, sigma: float = 1.0) -> Mixture:
    """The real distribution: weights as given, means on a circle of ``radius`` (first two axes)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or len(w) < 2:
        raise ValueError(f"collapse: weights must list at least 2 components; got {weights!r}")
    if (w <= 0).any() or abs(w.sum() - 1) > 1e-9:
        raise ValueError(f"collapse: planted weights must be > 0 and sum to 1; got {list(weights)}")
    if dim < 2:
        raise ValueError(f"collapse: dim must be >= 2 (means lie on a circle); got {dim}")
    if radius <= 0 or sigma <= 0:
        raise ValueError(f"collapse: radius and sigma must be > 0; got radius={radius}, sigma={sigma}")
    K = len(w)
    angle = 2 * np.pi * np.arange(K) / K
    means = np.zeros((K, dim))
    means[:, 0], means[:, 1] = radius * np.cos(angle), radius * np.sin(angle)
    return Mixture(w, means, float(sigma))
