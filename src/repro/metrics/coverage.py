"""Coverage of confidence intervals: the fraction of Monte Carlo replicates whose interval contains
the true value, with its binomial standard error, and the mean width."""

from __future__ import annotations

import numpy as np

__all__ = ["covers", "coverage", "coverage_se", "shrink_interval"]


def covers(lower: np.ndarray, upper: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Boolean array: ``lower <= truth <= upper`` (broadcast; closed interval)."""
    lower, upper = np.asarray(lower), np.asarray(upper)
    if np.any(lower > upper):
        raise ValueError("covers: some interval has lower > upper")
    return (lower <= truth) & (truth <= upper)


def coverage(lower: np.ndarray, upper: np.ndarray, truth: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Coverage and mean width over the replicate ``axis``."""
    return covers(lower, upper, truth).mean(axis=axis), (np.asarray(upper) - np.asarray(lower)).mean(axis=axis)


def coverage_se(cov: np.ndarray | float, n_replicates: int) -> np.ndarray:
    """Binomial standard error ``sqrt(c (1 - c) / n)`` of a coverage estimated from ``n_replicates``."""
    cov = np.asarray(cov, dtype=float)
    return np.sqrt(cov * (1.0 - cov) / n_replicates)


def shrink_interval(lower: np.ndarray, upper: np.ndarray, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval with the same centre and half-width multiplied by ``factor`` (a planted miscalibration)."""
    centre, half = (lower + upper) / 2, (upper - lower) / 2
    return centre - factor * half, centre + factor * half
