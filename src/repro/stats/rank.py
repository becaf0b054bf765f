"""Rank statistics shared by the papers' diagnostics."""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

__all__ = ["spearman"]


def spearman(x, y) -> float:
    """Spearman's rho (average ranks for ties) over the pairs where both values are finite; NaN when fewer
    than 3 such pairs remain or either side is constant on them (rho is undefined there)."""
    x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if len(x) != len(y):
        raise ValueError(f"spearman: x and y differ in length ({len(x)} vs {len(y)})")
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan")
    return float(spearmanr(x[ok], y[ok]).statistic)
