"""FDR-controlled group selectors by name: the group Gaussian mirror and its baselines.

Every selector takes a grouped design (``X``, ``y``, ``groups``, optional ``Sigma``: groupfdr's
simulated ``GroupedData``, or the design of :func:`repro.data.grouped_tables.load_grouped_table`),
the FDR levels ``qs`` and a generator, and returns the per-group statistic (None where a method has
none) and, for each q, the selected group labels. A coordinate method (GM, model-X knockoffs, NGM)
selects columns; a group counts as selected when any of its columns is (the "ignores groups"
baseline). The ``{method}`` wildcard is a key of :data:`SELECTORS`.

Mirror selectors (one registration each, :func:`_register_mirror`)
------------------------------------------------------------------
- ``group_gm``: the paper's group mirror; lasso fits with the GM package's penalty and
  standardisation, Eq. 2.5's threshold (smallest t with #{M <= -t} / max(#{M >= t}, 1) <= q).
- ``group_gm_plus``: the same statistics with the knockoff+ offset (1 + #{M <= -t}).
- ``group_gm_stepdown``: the same statistics with the GM R package's rule (step-down over the
  positive statistics, FDP_i = #{M < -M_(i)} / (i + 1)): the original implementation's rule beside ours.
- ``group_gm_ols``, ``group_gm_whitened``: OLS fits (our variants; need n > P + d).
- ``gm``, ``gm_stepdown``, ``gm_ols``: the coordinate-wise mirror with the same three choices.
  A regression or penalty can be overridden per method in ``method_options``.
- One function fits (:func:`mirror_statistics`), the rules only threshold (:func:`select_from_statistics`):
  selectors whose :data:`MIRRORS` entries differ only in ``rule`` have the same statistics on the same
  generator, so groupfdr computes them once per replicate and every rule variant reuses them.

Baselines
---------
- ``gm``: coordinate-wise Gaussian mirror (Xing, Zhao, Liu 2023), :class:`GaussianMirror`.
- ``group_knockoff``: group model-X knockoffs (Dai & Barber 2016 group SDP construction; Candes et al.
  2018) from ``knockpy`` (Gaussian sampler, lasso-coefficient-difference W, knockoff+ threshold).
- ``knockoff``: coordinate model-X knockoffs from ``knockpy``.
- ``bh``: Benjamini-Hochberg (``statsmodels``) on the partial F-test p-value of each group in the
  full OLS fit (needs n > P + 1).

Choices the paper leaves open
-----------------------------
- Knockoffs get the true Sigma when the simulator knows it (the model-X ideal), else knockpy's
  Ledoit-Wolf estimate; the S-matrix method is ``sdp`` by default (knockpy's default ``mvr`` for
  groups took about 17 s per 150-column fit here, ``sdp`` about 2 s).
- knockpy's W is computed once (at the first q) and thresholded with knockoff+ at every q; the tests
  check that this matches knockpy's own rejections.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from repro.methods.mirror import (SELECTION_RULES, GaussianMirror, GroupGaussianMirror, NeuralGroupMirror,
                                  select_by_threshold)
from repro.registry import Registry

__all__ = ["SELECTORS", "MIRRORS", "group_f_pvalues", "mirror_statistics", "run_selector", "same_statistics",
           "select_from_statistics"]

log = logging.getLogger(__name__)

SELECTORS = Registry("FDR group selector")


def run_selector(name: str, data: Any, qs, rng: np.random.Generator, **cfg) -> dict:
    """Run selector ``name``; returns ``{"stats": array | None, "selected": {q: labels}}``."""
    return SELECTORS.get(name)(data, qs=list(qs), rng=rng, **cfg)


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31 - 1))


def _columns_to_groups(groups: np.ndarray, columns: np.ndarray) -> np.ndarray:
    return np.unique(np.asarray(groups)[np.asarray(columns, dtype=int)])


#: Each mirror selector's statistic (``grouped``, ``regression``, ``norm``) and selection rule; filled by
#: :func:`_register_mirror`. Two selectors with the same statistic differ only in their rule.
MIRRORS: dict[str, dict[str, Any]] = {}
_STATISTIC_KEYS = ("grouped", "regression", "norm")


def mirror_statistics(name: str, data, rng: np.random.Generator, *, regression: str | None = None,
                      penalty="reference", **_) -> np.ndarray:
    """The mirror statistics of selector ``name`` on ``data``: one per sorted group label (group
    mirrors) or one per column (coordinate mirrors). The one place the mirror fits run; the selection
    rules (:func:`select_from_statistics`) only threshold what this returns, so two selectors with the
    same statistic can share one call (``repro.papers.groupfdr.experiment.run_chunk``)."""
    spec = MIRRORS[name]
    regression = spec["regression"] if regression is None else regression
    kw = {"regression": regression, "penalty": penalty, "random_state": _seed(rng)}
    if spec["grouped"]:
        return GroupGaussianMirror(data.groups, norm=spec["norm"], **kw).fit(data.X, data.y).statistics_
    return GaussianMirror(**kw).fit(data.X, data.y).statistics_


def select_from_statistics(name: str, data, stats: np.ndarray, qs) -> dict:
    """Selector ``name``'s rule applied to its statistics: ``{q: selected group labels}``. Coordinate
    mirrors select columns; a group counts as selected when any of its columns is."""
    spec = MIRRORS[name]
    rule = SELECTION_RULES.get(spec["rule"])
    if spec["grouped"]:
        labels = np.unique(data.groups)
        if len(stats) != len(labels):
            raise ValueError(f"{name}: {len(stats)} statistics for {len(labels)} groups")
        return {q: labels[rule(stats, q)] for q in qs}
    if len(stats) != data.X.shape[1]:
        raise ValueError(f"{name}: {len(stats)} statistics for {data.X.shape[1]} columns")
    return {q: _columns_to_groups(data.groups, rule(stats, q)) for q in qs}


def same_statistics(a: str, b: str) -> bool:
    """Whether mirror selectors ``a`` and ``b`` compute the same statistics (same options given)."""
    return all(MIRRORS[a][k] == MIRRORS[b][k] for k in _STATISTIC_KEYS)


def _register_mirror(name: str, doc: str, *, grouped: bool, regression: str = "lasso", norm: str = "l2",
                     rule: str = "min_t"):
    MIRRORS[name] = {"grouped": grouped, "regression": regression, "norm": norm, "rule": rule}

    def selector(data, *, qs, rng, **cfg) -> dict:
        stats = mirror_statistics(name, data, rng, **cfg)
        return {"stats": stats if grouped else None, "selected": select_from_statistics(name, data, stats, qs)}

    selector.__doc__ = doc
    SELECTORS.register(name)(selector)


# The group Gaussian mirror, its variants, and the coordinate-wise mirror. Every variant draws its
# perturbations from the same generator as group_gm, so on a replicate they differ only where named.
_register_mirror("group_gm", "The paper's group Gaussian mirror: lasso fits, l2 block statistic, Eq. 2.5 (no +1).",
                 grouped=True)
_register_mirror("group_gm_plus", "Our variant: the knockoff+ threshold (offset 1) on the group GM statistics.",
                 grouped=True, rule="min_t_plus")
_register_mirror("group_gm_stepdown", "The GM R package's rule (step-down, +1 in the denominator) on the group "
                 "GM statistics.", grouped=True, rule="gm_package")
_register_mirror("group_gm_ols", "Our variant: OLS mirror fits (n > P + d), standardised design.", grouped=True,
                 regression="ols")
_register_mirror("group_gm_whitened", "Our variant: OLS fits, both b+ +- b- whitened by ((U'U)^-1 + (V'V)^-1)^(-1/2).",
                 grouped=True, regression="ols", norm="whitened")
_register_mirror("gm", "Coordinate-wise Gaussian mirror (Xing, Zhao, Liu 2023): lasso fits, Eq. 2.5.", grouped=False)
_register_mirror("gm_stepdown", "Coordinate-wise Gaussian mirror with the GM R package's step-down rule.",
                 grouped=False, rule="gm_package")
_register_mirror("gm_ols", "Coordinate-wise Gaussian mirror with OLS fits (our variant).", grouped=False,
                 regression="ols")


_S_CACHE: dict[tuple, np.ndarray] = {}


def _smatrix(Sigma: np.ndarray, group_ids: np.ndarray | None, method: str) -> np.ndarray:
    """knockpy's S matrix for a known Sigma, memoised: a setting's Sigma is the same in every replicate."""
    from knockpy import smatrix

    key = (hash(Sigma.tobytes()), None if group_ids is None else hash(group_ids.tobytes()), method)
    if key not in _S_CACHE:
        if len(_S_CACHE) > 8:
            _S_CACHE.clear()
        _S_CACHE[key] = smatrix.compute_smatrix(Sigma, groups=group_ids, method=method)
    return _S_CACHE[key]


def _knockpy_w(data, rng, grouped: bool, knockoff_method: str, sigma: str, cache_smatrix: bool = True) -> np.ndarray:
    from knockpy.knockoff_filter import KnockoffFilter

    Sigma = data.Sigma if (sigma == "true" and getattr(data, "Sigma", None) is not None) else None
    labels = np.unique(data.groups)
    group_ids = np.searchsorted(labels, data.groups) + 1 if grouped else None  # knockpy wants 1..G
    kwargs = {"method": knockoff_method}
    if Sigma is not None and cache_smatrix:
        kwargs = {"S": _smatrix(Sigma, group_ids if group_ids is not None else np.arange(1, Sigma.shape[0] + 1),
                                knockoff_method)}
    state = np.random.get_state()
    np.random.seed(_seed(rng))  # knockpy draws knockoffs from numpy's global RNG; restored below
    try:
        kf = KnockoffFilter(ksampler="gaussian", fstat="lasso", knockoff_kwargs=kwargs)
        kf.forward(X=data.X, y=data.y, Sigma=Sigma, groups=group_ids, fdr=0.1)
    finally:
        np.random.set_state(state)
    return np.asarray(kf.W, dtype=float)


@SELECTORS.register("group_knockoff")
def group_knockoff(data, *, qs, rng, knockoff_method: str = "sdp", sigma: str = "true", cache_smatrix: bool = True,
                   **_) -> dict:
    W = _knockpy_w(data, rng, True, knockoff_method, sigma, cache_smatrix)
    labels = np.unique(data.groups)
    return {"stats": W, "selected": {q: labels[select_by_threshold(W, q, offset=1)] for q in qs}}


@SELECTORS.register("knockoff")
def knockoff(data, *, qs, rng, knockoff_method: str = "mvr", sigma: str = "true", cache_smatrix: bool = True,
             **_) -> dict:
    W = _knockpy_w(data, rng, False, knockoff_method, sigma, cache_smatrix)
    return {"stats": None,
            "selected": {q: _columns_to_groups(data.groups, select_by_threshold(W, q, offset=1)) for q in qs}}


def group_f_pvalues(X: np.ndarray, y: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Partial F-test p-value of each group in the OLS fit of y on (1, X): (labels, pvalues)."""
    from scipy import stats

    X = np.asarray(X, float) - np.mean(X, 0)
    y = np.asarray(y, float) - np.mean(y)
    n, P = X.shape
    df = n - P - 1
    if df <= 0:
        raise ValueError(f"group F-tests need n > P + 1; got n={n}, P={P}")
    Q, R = np.linalg.qr(X)
    beta = np.linalg.solve(R, Q.T @ y)
    rss = float(np.sum((y - X @ beta) ** 2))
    Rinv = np.linalg.inv(R)
    Ginv = Rinv @ Rinv.T
    labels = np.unique(groups)
    pvals = np.empty(len(labels))
    for g, lab in enumerate(labels):
        J = np.nonzero(groups == lab)[0]
        bJ = beta[J]
        extra = float(bJ @ np.linalg.solve(Ginv[np.ix_(J, J)], bJ))  # RSS(-J) - RSS
        F = (extra / len(J)) / (rss / df)
        pvals[g] = stats.f.sf(F, len(J), df)
    return labels, pvals


@SELECTORS.register("bh")
def bh(data, *, qs, rng, **_) -> dict:
    from statsmodels.stats.multitest import multipletests

    labels, pvals = group_f_pvalues(data.X, data.y, data.groups)
    return {"stats": -np.log10(pvals),
            "selected": {q: labels[multipletests(pvals, alpha=q, method="fdr_bh")[0]] for q in qs}}


def _ngm(data, qs, rng, grouped: bool, **cfg) -> dict:
    groups = data.groups if grouped else np.arange(data.X.shape[1])
    est = NeuralGroupMirror(groups, random_state=_seed(rng), **cfg).fit(data.X, data.y)
    if grouped:
        return {"stats": est.statistics_, "selected": {q: est.select(q) for q in qs}}
    return {"stats": None, "selected": {q: _columns_to_groups(data.groups, est.select(q)) for q in qs}}


@SELECTORS.register("group_ngm")
def group_ngm(data, *, qs, rng, **cfg) -> dict:
    return _ngm(data, qs, rng, True, **cfg)


@SELECTORS.register("ngm")
def ngm(data, *, qs, rng, **cfg) -> dict:
    return _ngm(data, qs, rng, False, **cfg)
