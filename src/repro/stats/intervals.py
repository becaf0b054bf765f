"""Confidence intervals for the claims checker: bootstrap over units, and Wilson for rates.

Every interval here is of one scalar quantity computed from per-unit values (one value per fold,
seed, replicate or item):

- :func:`bootstrap_interval`: the *expanded percentile* bootstrap (Hesterberg 2015, "What teachers
  should know about the bootstrap", §5.2). A plain percentile interval is too narrow for the few
  units a CPU-scale experiment has (its coverage for a mean of 10 normal values is about 91% at a
  nominal 95%); the expanded interval takes the bootstrap quantiles at the level whose normal
  quantile is ``sqrt(n / (n - 1)) * t_{n-1}``, which restores the t-interval's small-sample
  coverage while keeping the bootstrap's shape. Resampling is over units; paired samples are
  resampled together (the same unit indices for both), so their shared noise cancels.
- :func:`wilson_interval`: the Wilson score interval of a binomial rate (coverage, FDR events),
  which keeps its level near 0 and 1 where the normal approximation does not.
- :func:`newcombe_interval`: the difference of two independent binomial rates, by Newcombe's
  hybrid score method (Wilson intervals of each rate combined), which keeps its level with few
  trials and rates near 0 or 1 where the Wald interval of a difference does not.
- :func:`cv_corrected`: an interval over the folds of a repeated k-fold cross-validation widened
  by Nadeau and Bengio's (2003) correction: those folds share most of their training data, so their
  mean varies more than a mean of independent units, and a bootstrap over folds alone is too narrow.

Resamples come from a generator seeded by the caller, so a report is the same on every rebuild.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Interval", "bootstrap_interval", "t_interval", "cv_corrected", "expanded_alpha", "expanded_percentiles", "min_units", "newcombe_interval", "wilson_interval", "STATISTICS"]


@dataclass(frozen=True)
class Interval:
    """An estimate with a two-sided interval at ``level`` over ``n`` units (``method`` says how)."""

    estimate: float
    low: float
    high: float
    level: float
    n: int
    method: str

    def __str__(self) -> str:
        if self.low == self.high == self.estimate:
            return f"{self.estimate:.4g} (exact, n={self.n})"
        return f"{self.estimate:.4g} [{self.low:.4g}, {self.high:.4g}] ({100 * self.level:.3g}% {self.method}, n={self.n})"


def min_units(level: float) -> int:
    """The fewest units from which any interval can hold at ``level`` without assuming a distribution.

    With n exchangeable units the centre of a symmetric distribution lies outside the units' range
    [min, max] with probability 2^(1-n) (all n on one side of it), and a bootstrap interval never
    reaches beyond that range. So ``level`` needs 2^(1-n) <= 1 - level: 6 units at 95%, 8 at the
    98.75% of four Bonferroni-corrected settings. From fewer units the verdict can only be
    INCONCLUSIVE (a bootstrap of 2 units covers about half the time, not 95%).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level}")
    return max(2, math.ceil(1 + math.log2(1 / (1 - level)) - 1e-12))


def expanded_alpha(alpha: float, n: int) -> float:
    """The two-sided tail probability of the expanded percentile interval for ``n`` units."""
    if n < 2:
        raise ValueError("an interval needs at least two units")
    from scipy import stats  # here, not at import: every job that writes a claims sample imports this module
    z = math.sqrt(n / (n - 1)) * stats.t.ppf(1 - alpha / 2, n - 1)
    return float(2 * stats.norm.sf(z))


def expanded_percentiles(boot, n: int, level: float = 0.95, *, around: float | None = None) -> tuple[float, float]:
    """The expanded percentile interval of a bootstrap distribution ``boot`` drawn from ``n`` units.

    The plain percentile interval undercovers with few units; its tail probability is shrunk by
    :func:`expanded_alpha` (Hesterberg's expanded percentile). NaN resamples (a slope of equal x
    values) are ignored. ``around``: an estimate the interval must contain; a biased statistic
    (|coverage - nominal|, a log of a variance) can have its whole bootstrap distribution on one
    side of it, and the interval is then widened to the estimate (never narrowed).
    """
    alpha = expanded_alpha(1 - level, n)
    low, high = np.nanquantile(np.asarray(boot, dtype=float), [alpha / 2, 1 - alpha / 2])
    if around is not None:
        low, high = min(low, around), max(high, around)
    return float(low), float(high)


def _mean(x: np.ndarray, y: np.ndarray | None, idx: np.ndarray) -> np.ndarray:
    return x[idx].mean(axis=-1) if y is None else (x[idx] - y[idx]).mean(axis=-1)


def _slope(values: np.ndarray, abscissae: np.ndarray | None, idx: np.ndarray) -> np.ndarray:
    """Least-squares slope of the values on the units' abscissae, per resample."""
    if abscissae is None:
        raise ValueError("a slope needs the units' x values")
    xs, ys = abscissae[idx], values[idx]
    xc = xs - xs.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (xc * (ys - ys.mean(axis=-1, keepdims=True))).sum(axis=-1) / (xc**2).sum(axis=-1)


#: statistic name -> f(values, other, indices): ``mean`` (of values, or of paired differences
#: values - other) and ``slope`` (of values on other, the units' abscissae).
STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray | None, np.ndarray], np.ndarray]] = {
    "mean": _mean, "slope": _slope,
}


def bootstrap_interval(values, other=None, *, statistic: str = "mean", level: float = 0.95,
                       n_boot: int = 4000, seed: int = 0, paired: bool = True) -> Interval:
    """Expanded percentile bootstrap interval of ``statistic`` over units.

    Parameters
    ----------
    values : per-unit values (length n).
    other : optional second sample: paired values of the compared method (``paired=True``, same
        units in the same order), an independent sample (``paired=False``, difference of means), or
        the units' x values for ``statistic="slope"``.
    statistic : ``mean`` or ``slope`` (see :data:`STATISTICS`).
    level : two-sided confidence level.
    seed : seeds the resampling generator (deterministic reports).
    """
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}; known: {', '.join(STATISTICS)}")
    x = np.asarray(values, dtype=float)
    y = None if other is None else np.asarray(other, dtype=float)
    if y is not None and paired and len(y) != len(x):
        raise ValueError(f"paired samples differ in length ({len(x)} vs {len(y)})")
    n = len(x)
    if n < 2 or (y is not None and not paired and len(y) < 2):
        raise ValueError("an interval needs at least two units on each side")
    rng = np.random.default_rng(seed)
    fn = STATISTICS[statistic]
    all_idx = np.arange(n)
    if y is None or paired:
        estimate = float(fn(x, y, all_idx))
        boot = fn(x, y, rng.integers(0, n, size=(n_boot, n)))
        n_eff = n
    else:  # independent samples: resample each, difference of the two means
        if statistic != "mean":
            raise ValueError("unpaired samples support the mean difference only")
        estimate = float(x.mean() - y.mean())
        boot = x[rng.integers(0, n, size=(n_boot, n))].mean(axis=1) - \
            y[rng.integers(0, len(y), size=(n_boot, len(y)))].mean(axis=1)
        n_eff = min(n, len(y))
    low, high = expanded_percentiles(boot, n_eff, level)
    return Interval(estimate, low, high, level, n, f"bootstrap {statistic}")


def t_interval(values, *, level: float = 0.95) -> Interval:
    """Mean and Student-t interval of per-unit ``values`` (for tables and figures; the claims use the bootstrap).

    Fewer than two values give the mean with NaN bounds: no interval.
    """
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    if len(v) < 2:
        return Interval(mean, math.nan, math.nan, level, len(v), "t")
    from scipy import stats
    half = float(stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return Interval(mean, mean - half, mean + half, level, len(v), "t")


def wilson_interval(successes: int, trials: int, *, level: float = 0.95) -> Interval:
    """Wilson score interval of a binomial proportion ``successes / trials``."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"a rate needs 0 <= successes <= trials and trials > 0; got {successes}/{trials}")
    from scipy import stats
    z = stats.norm.ppf(1 - (1 - level) / 2)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2))
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), level, trials, "Wilson")


def newcombe_interval(successes_a: int, trials_a: int, successes_b: int, trials_b: int, *,
                      level: float = 0.95) -> Interval:
    """Interval of the difference ``successes_a / trials_a - successes_b / trials_b`` of two
    independent binomial rates: Newcombe's hybrid score interval (Newcombe 1998, "Interval
    estimation for the difference between independent proportions", Stat. Med. 17, method 10).

    With ``(l, u)`` the Wilson interval of each rate and ``d = p_a - p_b``:
    ``d - sqrt((p_a - l_a)^2 + (u_b - p_b)^2)`` to ``d + sqrt((u_a - p_a)^2 + (p_b - l_b)^2)``.
    ``n`` of the result is the smaller of the two trial counts.
    """
    a = wilson_interval(successes_a, trials_a, level=level)
    b = wilson_interval(successes_b, trials_b, level=level)
    d = a.estimate - b.estimate
    low = d - math.sqrt((a.estimate - a.low) ** 2 + (b.high - b.estimate) ** 2)
    high = d + math.sqrt((a.high - a.estimate) ** 2 + (b.estimate - b.low) ** 2)
    return Interval(d, max(-1.0, low), min(1.0, high), level, min(trials_a, trials_b), "Newcombe hybrid score")


def cv_corrected(interval: Interval, test_over_train: float) -> Interval:
    """``interval`` (of a mean over the J folds of a repeated cross-validation) widened for their overlap.

    Nadeau and Bengio (2003, "Inference for the generalization error", Machine Learning 52) replace
    the variance ``s^2 / J`` of a mean over J resampled train/test splits by
    ``s^2 (1 / J + n_test / n_train)``; Bouckaert and Frank (2004) apply it to repeated k-fold
    cross-validation (``n_test / n_train = 1 / (k - 1)``). The interval's half-widths about the
    estimate are scaled by the square root of the ratio, ``sqrt(1 + J n_test / n_train)``, so the
    bootstrap's shape is kept and only its spread corrected. The correction is a heuristic upper
    bound on the dependence between folds, the one the literature recommends for this design.
    """
    if not test_over_train > 0:
        raise ValueError(f"n_test / n_train must be positive, got {test_over_train}")
    factor = math.sqrt(1 + interval.n * test_over_train)
    est = interval.estimate
    return Interval(est, est - factor * (est - interval.low), est + factor * (interval.high - est), interval.level,
                    interval.n, f"{interval.method}, CV-corrected (Nadeau-Bengio, x{factor:.2f})")
