"""Gaussian mirrors for FDR-controlled selection of single features and of feature blocks.

Papers
------
- Xing, Zhao, Liu, "Controlling False Discovery Rate Using Gaussian Mirrors", JASA 2023,
  arXiv:1911.09761: the mirror pair x_j +- c_j z_j (Sec. 2), the OLS choice of c_j that makes the two
  copies' coefficients uncorrelated (Eq. 2.3-2.4), the mirror statistic
  M_j = |b_j+ + b_j-| - |b_j+ - b_j-| (Eq. 2.2) and the data-adaptive threshold (Eq. 2.5).
- Xing, Gui, Dai, Liu, "Neural Gaussian Mirror for Controlled Feature Selection in Neural
  Networks", arXiv:2010.06175: a kernel dependence measure to choose the perturbation scale.
- "Model-Agnostic FDR Control via Group Gaussian Mirror and Permutation SHAP" (NeurIPS 2026,
  arXiv 2608.00989, full text not reachable): block mirrors X_j +- Z_j C_j with a matrix-valued
  perturbation C_j and a block statistic; Permutation-SHAP derivatives for neural models.

What is computed
----------------
For a block J (an n x d sub-design, e.g. the d lags of one series), with R_x and R_z the residuals of
X_J and Z_J on X_-J (OLS; on the lasso-screened columns for the lasso path) and S_x = R_x'R_x, S_z = R_z'R_z,

    C_J = S_z^{-1/2} Q S_x^{1/2},   K = S_z^{-1/2} R_z'R_x S_x^{-1/2} = W diag(s) V',
    Q = W D V',  D = diag(sign(w_i'v_i)),

makes the residualised copies U = R_x + R_z C_J and V = R_x - R_z C_J exactly orthogonal (U'V = 0;
proof: C'S_zC = S_x and C'R_z'R_x = S_x^{1/2} V D s V' S_x^{1/2} is symmetric, so the cross terms
cancel). By Frisch-Waugh-Lovell the OLS coefficients (b+, b-) of the two copies in the regression of y
on (X_J + Z_J C_J, X_J - Z_J C_J, X_-J) then have covariance sigma^2 blockdiag((U'U)^-1, (V'V)^-1):
uncorrelated, hence independent under Gaussian noise, and for a null block both have mean 0. Then
the block statistic M_J = ||b+ + b-||_2 - ||b+ - b-||_2 is symmetric about 0 (flip b- -> -b-).
For d = 1, K is a scalar k, Q = D = sign(k) * sign(k) = 1 and C_J = c_j of Xing et al. exactly.

Preprocessing, fits and penalty, as the authors' R package does them (BioAlgs/GM, R/gm.R)
-----------------------------------------------------------------------------------------
- Standardisation: X's columns are centred and scaled to sd 1 (n - 1 denominator, R's ``scale``) and
  y is centred, on both paths (:func:`standardize`); the package does the same (``x = scale(x)``;
  glmnet's intercept centres y). The block statistic's l2 norm is therefore in per-sd units.
- The lasso path is the default (the Gaussian mirror is lasso-based); OLS (``fit="ols"``, needs
  n > P + d) is our variant, kept because it is exactly null-symmetric and is the block-size-1 check.
- Lasso path, as the package: (1) one lasso of y on X at the chosen penalty; its nonzero set S (at most
  0.9 n columns, the largest |coef|) screens the design; (2) for each block J, the residuals of X_J and
  Z_J on X_{S \\ J}, projected on the leading floor(0.95 |S \\ J|) left singular vectors (10 when that
  leaves less than 5% of a column), give C_J by the polar formula above; (3) a lasso of y on
  (X_J + Z_J C_J, X_J - Z_J C_J, X_-J) with an intercept and internally standardised columns (glmnet's
  ``standardize = TRUE``), at the same penalty; M_J from its two copies' coefficients.
- Penalty (``penalty="reference"``, the default): cv.glmnet's 10-fold CV minimum over the package's grid
  (fold fits standardised within the fold, the largest lambda at the minimum; :func:`_glmnet_cv_min`),
  100 values from lambda_max = max_j |x_j'y| / n^(3/2) down to lambda_max / 100, i.e. the usual lasso
  lambda_max (max |x_j'y| / n) divided by sqrt(n). Why a penalty this small, from the method's
  derivation: M_j is null-symmetric when the coefficients of the two copies are (nearly) independent
  with mean 0. In the lasso fit, the residual keeps the shrinkage bias X_S (beta_S - b_S) of the true
  features, of order lambda; a null x_j correlated with them (given the rest) picks that bias up through
  the part x_j shared by both copies, not through +-c_j z_j, so b+ and b- move together and
  |b+ + b-| > |b+ - b-| more often: null M_j leans positive, with a bias that grows with lambda. The
  5-fold LassoCV minimum over sklearn's grid (``penalty="cv"``, this module's earlier choice) is tuned
  for prediction and sat 1.7-3.4x above the package's lambda; the sign diagnostic (null M above vs
  below 0 per replicate, ``repro.papers.groupfdr.symmetry``; Table 3, docs/papers/groupfdr.md) is what
  the choice is judged by, never the FDR number.
- Checked against the package itself (2026-12-04; R 4.2, glmnet 4.1-6, GM from BioAlgs/GM run unmodified
  through ``workflow/scripts/groupfdr/gm_reference.R``; ``repro.papers.groupfdr.reference_check``;
  fixtures in tests/groupfdr/data). Given the package's own Z (recorded from its ``rnorm`` calls) and
  folds (replayed from its seed), ``mirror_scale="package"`` reproduces its lambda grid (1e-10), c_j
  (1e-8), the screening support, the exact zeros of M, the signs, M to within 2.4% of max |M| and the
  selection; what is left is glmnet's tolerance (its KKT conditions hold to ~2%, ours to 1e-4), which
  also moves lambda.min by one grid step on near-ties of the CV error. On 30 shared draws per design
  (docs/papers/groupfdr.md) the package itself has FDR 0.135 +- 0.021 (n = 60, P = 90) and 0.129 +-
  0.026 (AR(0.5), n = 100, p = 200) at q = 0.1 under its own rule, ours within 0.015 of it paired: the
  FDR excess at P > n is the method's as its authors' code runs it, not a deviation of ours.
- Definitions changed to match it (tests in test_groupfdr_gm_fixture.py): the CV is
  cv.glmnet's (within-fold standardisation, ties to the larger lambda; sklearn's ``LassoCV`` chose
  another grid point on the fixtures); the screening lasso standardises internally as glmnet does
  (penalty sqrt((n - 1)/n) times the old one on R's ``scale``d columns); ``foldid`` takes the CV folds.
- Deviations from the package, named: (1) c_J (``mirror_scale="exact"``, the default) from the realised
  residual norms of Z_J (exact decoupling U'V = 0 on the screened projection) where the package divides
  x_j's residual variance pp = 1 - ||P x_j||^2 / n by the EXPECTED residual variance of z_j, 1 - |S|/n
  (|S| counting j; ``mirror_scale="package"`` is that, singleton groups only): c_j differs by tens of %
  at p > n (a chi-square with n - 0.95|S| degrees of freedom over its mean), and a matrix C_J for blocks;
  (2) Z and random folds from numpy, not R's ``rnorm`` / ``sample``; (3) sklearn's coordinate descent,
  run to ``lasso_tol`` (1e-4 by default) with a warm start from the screening fit, in place of glmnet
  (thresh 1e-7); glmnet's path truncation (``fdev``, ``devmax``) of the lambda list is not copied;
  (4) the 0.9 n cap keeps the largest |coef| (the package's code zeroes the first columns by index, an
  evident slip); (5) the fallback to 10 singular vectors checks the residual share of x_j and z_j (the
  package: pp < 0.05 for x_j) in the exact scale; (6) the default selection rule is Eq. 2.5 (``min_t``);
  the package's step-down (``gm_package``) hard-codes q = 0.1 and selects the top statistic when its
  first estimate already exceeds q (R's ``1:0``); (7) no bootstrap variance of the FDR (``var.est``).
- Null sign symmetry, measured (2026-12-03, helper diagnostic, group mirror with d = 2-3 lags, lasso path,
  ``penalty="reference"``; share of positive among nonzero null M, mean of the per-draw share with a
  normal interval, the draw the unit; Wilson interval for one fixed null block per draw):
  under the GLOBAL null the signs are balanced: n = 150, P = 40: independent groups 0.510 [0.490, 0.530],
  correlated (rho 0.5 / 0.25) 0.497 [0.480, 0.514]; n = 60, P = 90: independent 0.524 [0.497, 0.552],
  correlated 0.518 [0.493, 0.542] (150 draws each; one block per draw: 0.47-0.49, Wilson +-0.09-0.12).
  WITH 4 true blocks (amplitude 6, 120 draws; pooled share with its Wilson interval beside the per-draw
  mean, the Wilson one too narrow by about sqrt(1.35) as the nulls of a draw are dependent): independent
  groups, n = 150: 0.495 [0.460, 0.530], pooled 0.509 [0.473, 0.544]: balanced. Correlated groups (rho
  0.5 / 0.25) lean POSITIVE: n = 150, P = 40: 0.571 [0.517, 0.626], pooled 0.575 [0.531, 0.618] (2.33 vs
  1.72 per draw, 12 of 16 null blocks exactly 0); n = 60, P = 90: per-draw 0.509 [0.456, 0.561] but pooled
  0.560 [0.521, 0.598] (2.93 vs 2.31), and 4.05 vs 2.65 per draw in 40 further draws. sklearn's 5-fold
  penalty (1.2x larger here) gives the same lean (pooled 0.585, 0.551), and a solver tolerance of 1e-8
  instead of 1e-4 leaves the counts unchanged (4.0 vs 2.6; 1.35 vs 1.75 in the low design). The penalty
  is the package's definition (checked against R/gm.R: the grid, 10-fold CV, lambda.min); the 10-fold
  CV minimum was the grid's TOP, lambda_max / sqrt(n), in every n = 150 draw checked (6 of 6), but not
  at p > n: the package's own CV chose grid index 34-35 of 100 on the p > n fixtures. The lean, present only with signals and correlated
  designs, is the shrinkage-bias mechanism above at the reference's own penalty: inherent in the lasso
  mirror as the reference runs it, not a deviation of ours that we could find. Left as is; the FDR
  claims carry its consequence, and Table 3 (small scale, 100 replicates per design) is the grid-wide
  measurement.

Choices the paper leaves open
-----------------------------
- The matrix perturbation: the polar-type choice above (exact decoupling, d = 1 gives GM's c_j).
- The block norm: Euclidean (``norm="l2"``), as in the spec; ``norm="whitened"`` (OLS only) scales both
  b+ +- b- by the same (U'U)^-1 + (V'V)^-1 inverse square root (still exactly null-symmetric).
- Neural variant: all blocks are mirrored at once in one network (one fit per replicate, not one per
  block); (x+, x-) of a block are exchangeable in law, so the null symmetry survives. The kernel
  dependence is the biased HSIC (Gretton et al. 2005) of the OLS residuals of X_J +- c Z_J diag(sd) on
  X_-J, RBF kernels with the median heuristic, on at most ``hsic_samples`` rows; grid
  c in [0.25, 2] (NGM). The block importance of a copy is the matrix of smoothed Permutation-SHAP
  derivatives (local-linear slope of each sub-feature's SHAP values against its values, Gaussian
  kernel, Silverman bandwidth) over the explained rows; M_J = ||D+ + D-||_F - ||D+ - D-||_F. For a
  linear model the SHAP derivative is the coefficient, so this is GM's statistic times sqrt(m).

Selection rules (:data:`SELECTION_RULES`; the selectors name them)
------------------------------------------------------------------
- ``min_t`` (default, the paper's Eq. 2.5 and the spec): tau_q = min{t > 0 : #{M <= -t} /
  max(#{M >= t}, 1) <= q}, select M >= tau_q. With independent, symmetric null signs it controls the
  modified FDR E[V / (R + 1/q)] exactly (the knockoff argument of Barber & Candes 2015 with offset 0)
  and the FDR only as the number of selections grows.
- ``min_t_plus``: the knockoff+ offset, (1 + #{M <= -t}) / max(#{M >= t}, 1) (``group_gm_plus``).
- ``gm_package``: the R package's rule, step-down over the positive statistics with FDP_i =
  #{M < -M_(i)} / (i + 1) (:func:`step_down_selection`; ``group_gm_stepdown``, ``gm_stepdown``). The
  package hard-codes q = 0.1; we take q as given.

Deviations
----------
- NGM scores a copy by connection weights; we use smoothed Permutation-SHAP derivatives (the
  NeurIPS paper's importance). ``importance="weights"`` gives NGM's connection-weight score.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from repro.registry import Registry

__all__ = [
    "MirrorConfig",
    "data_adaptive_threshold",
    "select_by_threshold",
    "step_down_selection",
    "SELECTION_RULES",
    "standardize",
    "reference_lambda_grid",
    "choose_penalty",
    "fdp_curve",
    "gm_statistics",
    "block_perturbation",
    "group_mirror_statistics",
    "block_statistic",
    "GaussianMirror",
    "GroupGaussianMirror",
    "NeuralGroupMirror",
    "group_index",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MirrorConfig:
    """Defaults of the mirror methods (values from the GM / NGM papers where they state one)."""

    q: float = 0.1  # FDR level; GM paper Sec. 4 reports q = 0.1 (we sweep 0.05, 0.1, 0.2)
    regression: str = "auto"  # "ols" (n > P + d), "lasso" (high dimension, GM Sec. 3); auto picks
    norm: str = "l2"  # block norm of the mirror statistic
    c_grid: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)  # NGM: c in std(x) * [0.25, 2]
    hsic_samples: int = 300  # rows used for the HSIC of each grid value


# ----------------------------------------------------------------------------- threshold


def data_adaptive_threshold(stats: np.ndarray, q: float, *, offset: int = 0) -> float:
    """The smallest t > 0 with (offset + #{M <= -t}) / max(#{M >= t}, 1) <= q; ``inf`` if none.

    Implements Eq. (2.5) of Xing et al. (offset 0, the mirror threshold) and, with ``offset=1``,
    the knockoff+ threshold of Barber & Candes (2015). The FDP estimate only changes at the values
    |M_j|, so the minimum over t > 0 is attained at one of them.

    Parameters
    ----------
    stats : array of shape (p,)
        Mirror (or knockoff) statistics.
    q : float
        Target FDR level in (0, 1).
    offset : int
        0 for the Gaussian mirror, 1 for knockoff+.
    """
    stats = np.asarray(stats, dtype=float).ravel()
    if not 0 < q < 1:
        raise ValueError(f"q must lie in (0, 1), got {q}")
    if not np.all(np.isfinite(stats)):
        raise ValueError("mirror statistics contain NaN or inf")
    candidates = np.unique(np.abs(stats[stats != 0]))  # sorted ascending
    if candidates.size == 0:
        return float("inf")
    srt = np.sort(stats)
    n_pos = stats.size - np.searchsorted(srt, candidates, side="left")  # #{M >= t}
    n_neg = np.searchsorted(srt, -candidates, side="right")  # #{M <= -t}
    fdp = (offset + n_neg) / np.maximum(n_pos, 1)
    ok = np.nonzero(fdp <= q)[0]
    return float(candidates[ok[0]]) if ok.size else float("inf")


def select_by_threshold(stats: np.ndarray, q: float, *, offset: int = 0) -> np.ndarray:
    """Indices j with M_j >= tau_q (sorted); empty when no threshold meets the level."""
    tau = data_adaptive_threshold(stats, q, offset=offset)
    return np.nonzero(np.asarray(stats) >= tau)[0]


def step_down_selection(stats: np.ndarray, q: float) -> np.ndarray:
    """The GM R package's rule: walk down the positive statistics from the largest, with
    FDP_i = #{M < -M_(i)} / (i + 1) at the i-th largest M_(i) > 0, and keep the top k before the first i
    whose FDP_i exceeds q (all positives if none does). Indices, sorted.

    Differs from :func:`select_by_threshold` (Eq. 2.5) in three ways: +1 in the denominator, a strict
    ``<`` for the negatives, and step-down (stop at the first exceedance) instead of the smallest t
    whose estimate is below q. The package hard-codes q = 0.1 and, when the first FDP_i already exceeds
    q, still selects the top statistic (R's ``1:0``); we take q as given and select nothing then.
    """
    stats = np.asarray(stats, dtype=float).ravel()
    if not 0 < q < 1:
        raise ValueError(f"q must lie in (0, 1), got {q}")
    pos = np.nonzero(stats > 0)[0]
    order = pos[np.argsort(-stats[pos], kind="stable")]
    neg = np.sort(stats[stats < 0])
    k = 0
    for i, j in enumerate(order, start=1):
        if np.searchsorted(neg, -stats[j], side="left") / (i + 1) > q:
            break
        k = i
    return np.sort(order[:k])


#: How a vector of mirror statistics becomes a selection at level q (see the module docstring).
SELECTION_RULES = Registry("mirror selection rule")
SELECTION_RULES.register("min_t")(lambda stats, q: select_by_threshold(stats, q, offset=0))
SELECTION_RULES.register("min_t_plus")(lambda stats, q: select_by_threshold(stats, q, offset=1))
SELECTION_RULES.register("gm_package")(step_down_selection)


def fdp_curve(stats: np.ndarray, ts: np.ndarray, *, offset: int = 0) -> np.ndarray:
    """FDP^(t) = (offset + #{M <= -t}) / max(#{M >= t}, 1) at each t of ``ts``."""
    stats = np.asarray(stats, dtype=float)
    ts = np.asarray(ts, dtype=float)
    n_neg = (stats[None, :] <= -ts[:, None]).sum(1)
    n_pos = (stats[None, :] >= ts[:, None]).sum(1)
    return (offset + n_neg) / np.maximum(n_pos, 1)


# ----------------------------------------------------------------------------- coordinate-wise GM


def gm_statistics(X: np.ndarray, y: np.ndarray, Z: np.ndarray, *,
                  standardise: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian mirror statistics by OLS, one feature at a time, the direct way (reference path).

    ``standardise``: on the standardised design and centred response, as :func:`group_mirror_statistics`.

    For each j: c_j = sqrt(x_j'(I - P_-j)x_j / z_j'(I - P_-j)z_j) (Xing et al., Eq. 2.4), then the
    least-squares fit of y on (x_j + c_j z_j, x_j - c_j z_j, X_-j) and
    M_j = |b_j+ + b_j-| - |b_j+ - b_j-| (Eq. 2.2). Costs p full regressions; the block code
    (:func:`group_mirror_statistics`) computes the same numbers through partitioned inverses.

    Returns
    -------
    M, c, b_plus, b_minus : arrays of shape (p,)
    """
    X, y, Z = _check_xyz(X, y, Z)
    if standardise:
        X, y = standardize(X), y - y.mean()
    n, p = X.shape
    if n <= p + 1:
        raise ValueError(f"OLS Gaussian mirror needs n > p + 1; got n={n}, p={p} (use fit='lasso')")
    M, c, bp, bm = (np.empty(p) for _ in range(4))
    for j in range(p):
        rest = np.delete(X, j, axis=1)
        Q, _ = np.linalg.qr(rest)
        rx = X[:, j] - Q @ (Q.T @ X[:, j])
        rz = Z[:, j] - Q @ (Q.T @ Z[:, j])
        c[j] = np.sqrt(rx @ rx / (rz @ rz))
        design = np.column_stack([X[:, j] + c[j] * Z[:, j], X[:, j] - c[j] * Z[:, j], rest])
        coef = np.linalg.lstsq(design, y, rcond=None)[0]
        bp[j], bm[j] = coef[0], coef[1]
        M[j] = abs(bp[j] + bm[j]) - abs(bp[j] - bm[j])
    return M, c, bp, bm


# ----------------------------------------------------------------------------- block mirror


def block_perturbation(Rx: np.ndarray, Rz: np.ndarray) -> np.ndarray:
    """The d x d matrix C with (Rx + Rz C)'(Rx - Rz C) = 0 (exact decoupling of the two copies).

    C = S_z^{-1/2} Q S_x^{1/2}, Q = W D V' from the SVD K = W diag(s) V' of
    K = S_z^{-1/2} Rz'Rx S_x^{-1/2}, D = diag(sign(w_i'v_i)). For d = 1 this is
    c = sqrt(x'(I-P)x / z'(I-P)z) of the Gaussian mirror (see the module docstring).
    """
    Sx = Rx.T @ Rx
    Sz = Rz.T @ Rz
    sx_half = _sym_sqrt(Sx)
    sz_inv_half = _sym_sqrt(Sz, inverse=True)
    K = sz_inv_half @ (Rz.T @ Rx) @ _sym_sqrt(Sx, inverse=True)
    W, _, Vt = np.linalg.svd(K)
    D = np.sign(np.einsum("ij,ji->i", W.T, Vt.T))
    D[D == 0] = 1.0
    Q = (W * D) @ Vt
    return sz_inv_half @ Q @ sx_half


def block_statistic(b_plus: np.ndarray, b_minus: np.ndarray, weight: np.ndarray | None = None) -> float:
    """M_J = ||W(b+ + b-)|| - ||W(b+ - b-)|| (Frobenius for matrices); W = I by default."""
    s, d = b_plus + b_minus, b_plus - b_minus
    if weight is not None:
        s, d = weight @ s, weight @ d
    return float(np.linalg.norm(s) - np.linalg.norm(d))


def group_index(groups: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted unique group labels and, for each, the column indices of its block."""
    groups = np.asarray(groups)
    labels = np.unique(groups)
    return labels, [np.nonzero(groups == g)[0] for g in labels]


def group_mirror_statistics(X: np.ndarray, y: np.ndarray, groups: np.ndarray, Z: np.ndarray, *,
                            fit: str = "lasso", norm: str = "l2", penalty="reference", lasso_tol: float = 1e-4,
                            standardise: bool = True, random_state: int = 0, foldid: np.ndarray | None = None,
                            mirror_scale: str = "exact") -> dict:
    """Block mirror statistics M_J for every group (lasso or OLS fits).

    Parameters
    ----------
    X : (n, P) design; y : (n,) response; groups : (P,) group label of each column;
    Z : (n, P) standard Gaussian perturbation, column k used for column k of X.
    fit : "lasso" (the Gaussian mirror's fit, the default) or "ols" (our variant; n > P + max block size).
    norm : "l2" or "whitened" (OLS only).
    penalty : lasso penalty, see :func:`choose_penalty`; lasso_tol : tol of sklearn's coordinate descent.
    foldid : (n,) CV fold of each row for ``penalty="reference"`` (cv.glmnet's ``foldid``); None: random folds.
    mirror_scale : "exact" (C_J from the realised residual norms, the default) or "package" (singleton
        groups, lasso path: c_j^2 = (1 - ||P x_j||^2 / n) / (1 - |S| / n), the GM package's ``sigmaz``;
        ``Z`` is then the package's standard normal draw, its ``z`` divided by its sd).
    standardise : centre and scale X's columns (:func:`standardize`) and centre y first, as the GM
        package does; the statistics are then those of the standardised design.

    Returns
    -------
    dict with ``labels`` (sorted group labels), ``M`` (statistic per label), ``C`` (list of d x d
    perturbations), ``b_plus`` / ``b_minus`` (lists of coefficient vectors).
    """
    X, y, Z = _check_xyz(X, y, Z)
    labels, blocks = group_index(groups)
    if len(groups) != X.shape[1]:
        raise ValueError(f"groups has {len(groups)} labels for {X.shape[1]} columns")
    if standardise:
        X, y = standardize(X), y - y.mean()
    if mirror_scale not in ("exact", "package"):
        raise ValueError(f"mirror_scale must be 'exact' or 'package', got {mirror_scale!r}")
    if mirror_scale == "package" and (fit != "lasso" or max(len(b) for b in blocks) > 1):
        raise ValueError("mirror_scale='package' is the GM package's c_j: singleton groups on the lasso path only")
    if fit == "ols":
        return _group_mirror_ols(X, y, Z, labels, blocks, norm)
    if fit == "lasso":
        if norm != "l2":
            raise ValueError(f"norm={norm!r} needs fit='ols' (the lasso path uses the l2 block norm)")
        return _group_mirror_lasso(X, y, Z, labels, blocks, penalty, lasso_tol, random_state, foldid, mirror_scale)
    raise ValueError(f"fit must be 'ols' or 'lasso', got {fit!r}")


def _group_mirror_ols(X, y, Z, labels, blocks, norm):
    n, P = X.shape
    dmax = max(len(b) for b in blocks)
    if n <= P + dmax:
        raise ValueError(f"OLS group mirror needs n > P + max block size; got n={n}, P={P}, d={dmax} (use fit='lasso')")
    # One QR of X serves every block: with G^{-1} = (X'X)^{-1}, the residual of X_J on X_-J is
    # R_x = X G^{-1}_{:,J} (G^{-1}_{JJ})^{-1}, and P_X - P_-J projects onto span(R_x).
    Qx, Rr = np.linalg.qr(X)
    Rinv = linalg.solve_triangular(Rr, np.eye(P))
    Ginv = Rinv @ Rinv.T
    y_perp = y - Qx @ (Qx.T @ y)
    Z_perp = Z - Qx @ (Qx.T @ Z)
    out = {"labels": labels, "M": np.empty(len(blocks)), "C": [], "b_plus": [], "b_minus": []}
    for g, J in enumerate(blocks):
        Sx = np.linalg.inv(Ginv[np.ix_(J, J)])  # = R_x'R_x
        Rx = X @ Ginv[:, J] @ Sx  # (n, d)
        proj = lambda v: Rx @ np.linalg.solve(Sx, Rx.T @ v)  # projection onto span(R_x)
        Rz = Z_perp[:, J] + proj(Z[:, J])  # residual of Z_J on X_-J
        ry = y_perp + proj(y)  # residual of y on X_-J
        C = block_perturbation(Rx, Rz)
        U, V = Rx + Rz @ C, Rx - Rz @ C
        coef = np.linalg.lstsq(np.hstack([U, V]), ry, rcond=None)[0]  # FWL: = full-model coefficients
        d = len(J)
        bp, bm = coef[:d], coef[d:]
        weight = None
        if norm == "whitened":
            weight = _sym_sqrt(np.linalg.inv(U.T @ U) + np.linalg.inv(V.T @ V), inverse=True)
        elif norm != "l2":
            raise ValueError(f"norm must be 'l2' or 'whitened', got {norm!r}")
        out["M"][g] = block_statistic(bp, bm, weight)
        out["C"].append(C)
        out["b_plus"].append(bp)
        out["b_minus"].append(bm)
    return out


def standardize(X: np.ndarray) -> np.ndarray:
    """Centre each column and scale it to unit standard deviation (n - 1 denominator, as R's ``scale``).

    A constant column is an error: it carries no information and its mirror would divide by zero.
    """
    X = np.asarray(X, dtype=float)
    sd = X.std(axis=0, ddof=1)
    if np.any(sd == 0):
        raise ValueError(f"constant column(s) {np.nonzero(sd == 0)[0][:5].tolist()} cannot be standardised")
    return (X - X.mean(axis=0)) / sd


def reference_lambda_grid(X: np.ndarray, y: np.ndarray, n_lambda: int = 100) -> np.ndarray:
    """The GM package's penalty grid: lambda_max = max_j |x_j'y| / n^(3/2) down to lambda_max / 100.

    ``X`` standardised. lambda_max is the usual lasso lambda_max (max |x_j'y| / n) divided by sqrt(n): the
    grid only holds penalties small enough that the fit stays close to least squares on the selected
    features (see "Penalty" in the module docstring).
    """
    n = len(y)
    lam_max = float(np.max(np.abs(X.T @ (y - y.mean())))) / n**1.5
    return lam_max * (1e-2) ** (np.arange(n_lambda) / n_lambda)


def choose_penalty(X: np.ndarray, y: np.ndarray, penalty="reference", *, random_state: int = 0,
                   foldid: np.ndarray | None = None) -> float:
    """The lasso penalty of the mirror fits (sklearn's scale: (1/2n)||y - Xb||^2 + alpha ||b||_1).

    ``"reference"``: cv.glmnet's 10-fold CV minimum over :func:`reference_lambda_grid` (the GM package;
    :func:`_glmnet_cv_min`), on the folds ``foldid`` (one label per row, cv.glmnet's ``foldid``) when given,
    else on random folds of equal size;
    ``"cv"``: 5-fold ``LassoCV`` minimum over sklearn's own grid of 30 (this module's earlier
    choice, which unbalanced the null signs); a number: that penalty.
    """
    from sklearn.linear_model import LassoCV

    if isinstance(penalty, (int, float)) and not isinstance(penalty, bool):
        if penalty <= 0:
            raise ValueError(f"a lasso penalty must be > 0, got {penalty}")
        return float(penalty)
    if penalty == "reference":
        if foldid is None:  # as cv.glmnet: sample(rep(1:10, length = n))
            foldid = np.random.default_rng(random_state).permutation(np.arange(len(y)) % 10)
        return _glmnet_cv_min(X, y, reference_lambda_grid(X, y), np.asarray(foldid))
    if penalty == "cv":
        return float(LassoCV(cv=5, random_state=random_state, alphas=30, max_iter=5000).fit(X, y).alpha_)
    raise ValueError(f"penalty must be 'reference', 'cv' or a positive number, got {penalty!r}")


def _glmnet_cv_min(X: np.ndarray, y: np.ndarray, grid: np.ndarray, foldid: np.ndarray, tol: float = 1e-4) -> float:
    """cv.glmnet's ``lambda.min`` for the Gaussian lasso: on each fold's training rows a lasso path over ``grid``
    (descending) with an intercept on columns standardised within the fold (glmnet's ``standardize =
    TRUE``, sd with 1/n), the squared error of the held-out rows at each lambda summed over folds; the
    LARGEST lambda whose mean error is the minimum. Not sklearn's ``LassoCV``, which neither standardises
    within the fold nor breaks ties upward: on the package's fixtures it chose a different grid point.
    ``tol`` is sklearn's (1e-4, as ``LassoCV``): 1e-7 cost 25-40x more at p > n and moved no fixture's
    choice by more than the one grid step that glmnet's own tolerance does."""
    from sklearn.linear_model import lasso_path

    if foldid.shape != (len(y),):
        raise ValueError(f"foldid needs one fold label per row: {foldid.shape} for {len(y)} rows")
    err = np.zeros(len(grid))
    for f in np.unique(foldid):
        train, test = foldid != f, foldid == f
        Xt = X[train]
        mu, sd = Xt.mean(0), Xt.std(0)
        sd[sd == 0] = 1.0
        y_mu = y[train].mean()
        _, coefs, _ = lasso_path((Xt - mu) / sd, y[train] - y_mu, alphas=grid, tol=tol, max_iter=100_000)
        pred = y_mu + (X[test] - mu) @ (coefs / sd[:, None])
        err += ((y[test, None] - pred) ** 2).sum(0)
    return float(np.max(grid[err <= err.min()]))


def _screened_set(coef: np.ndarray, n: int) -> np.ndarray:
    """Columns with a nonzero initial-fit coefficient, at most 0.9 n of them (the largest |coef|)."""
    nz = np.nonzero(coef)[0]
    cap = int(0.9 * n)
    if nz.size > cap:
        nz = np.sort(nz[np.argsort(-np.abs(coef[nz]), kind="stable")[:cap]])
    return nz


def _residual_on(A: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Residual of the columns of V on span(A), the span truncated as in the GM package: the leading
    floor(0.95 k) left singular vectors of the k columns of A, or only 10 of them when that leaves less
    than 5% of some column of V's sum of squares (V nearly in the span).

    The left singular vectors come from the eigendecomposition of the k x k Gram matrix A'A
    (u_i = A w_i / s_i), not from an SVD of the n x k matrix A: the same vectors (up to sign, which the
    projection ignores) at a fraction of the cost (the SVD was 86% of a group-mirror fit at small
    scale). Directions with s_i <= 1e-7 s_1 count as outside the span (the SVD cut-off was 1e-10; the
    Gram matrix squares the condition number)."""
    if A.shape[1] == 0:
        return V.copy()
    ev, W = np.linalg.eigh(A.T @ A)
    ev, W = ev[::-1], W[:, ::-1]
    rank = int(np.sum(ev > ev[0] * 1e-14))

    def residual(keep: int) -> np.ndarray:
        U = A @ (W[:, :keep] / np.sqrt(ev[:keep]))
        return V - U @ (U.T @ V)

    R = residual(min(int(0.95 * A.shape[1]), rank))
    if np.any((R**2).sum(0) < 0.05 * (V**2).sum(0)):
        R = residual(min(10, rank))
    return R


def _glmnet_like_lasso(design: np.ndarray, y: np.ndarray, alpha: float, tol: float,
                       init: np.ndarray | None = None) -> np.ndarray:
    """Lasso with an intercept on internally standardised columns, coefficients on the columns' own
    scale (glmnet's ``standardize = TRUE``: the penalty of column k is alpha * sd_k * |b_k|).
    ``init`` (coefficients on the columns' own scale) warm-starts coordinate descent; the optimum
    is the same (a convex problem), reached in fewer sweeps."""
    from sklearn.linear_model import Lasso

    mu, sd = design.mean(0), design.std(0)
    est = Lasso(alpha=alpha, max_iter=100_000, tol=tol, warm_start=init is not None)
    if init is not None:
        est.coef_ = init * sd
    return est.fit((design - mu) / sd, y - y.mean()).coef_ / sd


def _package_scale(A: np.ndarray, x: np.ndarray, n_screened: int) -> float:
    """The GM package's c_j (its ``sqrt(sigmaz_vec[j])``): pp = 1 - ||P x_j||^2 / n with P the projection on
    the leading floor(0.95 k) left singular vectors of the k columns A = X_{S \\ j} (the leading 10 when
    pp < 0.05), and c_j^2 = pp / (1 - |S| / n): the residual variance of x_j over the EXPECTED residual
    variance of a standard normal z_j (|S| counted with j), not its realised one as :func:`block_perturbation`."""
    n = len(x)

    def pp(keep: int) -> float:
        if keep == 0:
            return 1.0
        U = A @ (W[:, :keep] / np.sqrt(ev[:keep]))
        return 1.0 - float(np.sum((U.T @ x) ** 2)) / n

    if A.shape[1] == 0:
        ev, W = np.ones(0), np.zeros((0, 0))
        value = pp(0)
    else:
        ev, W = np.linalg.eigh(A.T @ A)
        ev, W = ev[::-1], W[:, ::-1]
        rank = int(np.sum(ev > ev[0] * 1e-14))
        value = pp(min(max(int(0.95 * A.shape[1]), 1), n, rank))
        if value < 0.05:
            value = pp(min(10, rank))
    return float(np.sqrt(value / (1.0 - n_screened / n)))


def _group_mirror_lasso(X, y, Z, labels, blocks, penalty, tol, random_state, foldid=None, mirror_scale="exact"):
    n, P = X.shape
    alpha = choose_penalty(X, y, penalty, random_state=random_state, foldid=foldid)
    init = _glmnet_like_lasso(X, y, alpha, tol)
    screened = _screened_set(init, n)
    out = {"labels": labels, "M": np.empty(len(blocks)), "C": [], "b_plus": [], "b_minus": [], "alpha": alpha,
           "n_screened": int(screened.size), "init_coef": init}
    for g, J in enumerate(blocks):
        rest_idx = np.setdiff1d(np.arange(P), J)
        others = np.setdiff1d(screened, J)
        d = len(J)
        if mirror_scale == "package":
            C = np.array([[_package_scale(X[:, others], X[:, J[0]], screened.size)]])
        else:
            resid = _residual_on(X[:, others], np.hstack([X[:, J], Z[:, J]]))
            C = block_perturbation(resid[:, :d], resid[:, d:])
        design = np.hstack([X[:, J] + Z[:, J] @ C, X[:, J] - Z[:, J] @ C, X[:, rest_idx]])
        coef = _glmnet_like_lasso(design, y, alpha, tol, init=np.concatenate([np.zeros(2 * d), init[rest_idx]]))
        bp, bm = coef[:d], coef[d:2 * d]
        out["M"][g] = block_statistic(bp, bm)
        out["C"].append(C)
        out["b_plus"].append(bp)
        out["b_minus"].append(bm)
    return out


# ----------------------------------------------------------------------------- estimators


class GroupGaussianMirror(BaseEstimator):
    """Group Gaussian mirror: FDR-controlled selection of feature blocks (sklearn API).

    Parameters
    ----------
    groups : array of shape (P,) or None
        Group label per column; None = every column its own group (then this is the Gaussian
        mirror of Xing et al.).
    q : float
        FDR level of :meth:`select` by default.
    regression : {"lasso", "ols"}
        "lasso" (default): the Gaussian mirror's lasso fits; "ols": our variant (n > P + max block size).
    penalty : "reference", "cv" or a number
        Lasso penalty (:func:`choose_penalty`).
    norm : {"l2", "whitened"}
    rule : key of :data:`SELECTION_RULES`
        "min_t" (Eq. 2.5, default), "min_t_plus" (knockoff+ offset), "gm_package" (the R package's step-down).
    random_state : int or None
        Seed of the Gaussian perturbations Z (and of the penalty's CV folds).

    Attributes
    ----------
    groups_ : sorted group labels; statistics_ : M per group; selected_ : selected group labels at ``q``;
    C_ : perturbation per group; fit_ : the fit used; alpha_ : the lasso penalty (None for OLS).

    References
    ----------
    Xing, Zhao, Liu (2023), Eq. 2.2-2.5; the block form is described in the module docstring.
    """

    def __init__(self, groups=None, *, q: float = 0.1, regression: str = "lasso", penalty="reference",
                 norm: str = "l2", rule: str = "min_t", random_state=None):
        self.groups = groups
        self.q = q
        self.regression = regression
        self.penalty = penalty
        self.norm = norm
        self.rule = rule
        self.random_state = random_state

    def fit(self, X, y, groups=None):
        X = np.asarray(X, dtype=float)
        g = groups if groups is not None else self.groups
        groups = np.arange(X.shape[1]) if g is None else np.asarray(g)
        if self.regression not in ("lasso", "ols"):
            raise ValueError(f"regression must be 'lasso' or 'ols', got {self.regression!r}")
        SELECTION_RULES.get(self.rule)  # an unknown rule fails before the fit
        rng = np.random.default_rng(self.random_state)
        Z = rng.standard_normal(X.shape)
        res = group_mirror_statistics(X, y, groups, Z, fit=self.regression, norm=self.norm, penalty=self.penalty,
                                      random_state=int(rng.integers(2**31)))
        self.fit_ = self.regression
        self.alpha_ = res.get("alpha")
        self.groups_ = res["labels"]
        self.statistics_ = res["M"]
        self.C_ = res["C"]
        self.b_plus_, self.b_minus_ = res["b_plus"], res["b_minus"]
        self.selected_ = self.select(self.q)
        return self

    def select(self, q: float | None = None) -> np.ndarray:
        """Selected group labels at level ``q`` (default: the ``q`` given at construction)."""
        check_is_fitted(self, "statistics_")
        return self.groups_[SELECTION_RULES.get(self.rule)(self.statistics_, self.q if q is None else q)]


class GaussianMirror(GroupGaussianMirror):
    """Coordinate-wise Gaussian mirror (Xing, Zhao, Liu 2023): every column its own group."""

    def __init__(self, *, q: float = 0.1, regression: str = "lasso", penalty="reference", rule: str = "min_t",
                 random_state=None):
        super().__init__(None, q=q, regression=regression, penalty=penalty, norm="l2", rule=rule,
                         random_state=random_state)

    def fit(self, X, y):
        return super().fit(X, y, groups=np.arange(np.asarray(X).shape[1]))


# ----------------------------------------------------------------------------- neural variant


class NeuralGroupMirror(BaseEstimator):
    """Group mirror for a neural network, with Permutation-SHAP block importances (sklearn API).

    Every block J is mirrored as X_J +- c_J Z_J diag(sd(X_J)), c_J minimising the HSIC between the
    residuals (on X_-J) of the two copies over ``c_grid``; one MLP is trained on all 2P mirrored
    columns; the importance of a copy is the (m x d) matrix of smoothed Permutation-SHAP
    derivatives; M_J = ||D+ + D-||_F - ||D+ - D-||_F. With blocks of size 1 this is the Neural
    Gaussian Mirror with a Permutation-SHAP importance.

    Parameters
    ----------
    groups : (P,) labels or None (singletons); q : FDR level; hidden : MLP layer sizes;
    max_iter : MLP epochs; alpha : MLP L2 penalty; c_grid : perturbation grid (NGM);
    hsic_samples : rows for the HSIC; n_explain : rows explained by SHAP; n_background : background rows;
    n_permutations : antithetic permutation pairs per explained row; importance : "shap" or "weights";
    shap_backend : "ours" (vectorised, checked against shap in the tests) or "shap"; bandwidth_scale :
    multiplies Silverman's bandwidth of the derivative smoother; random_state : seed.
    """

    def __init__(self, groups=None, *, q: float = 0.1, hidden=(64, 32), max_iter: int = 300, alpha: float = 1e-3,
                 c_grid=MirrorConfig.c_grid, hsic_samples: int = 300, n_explain: int = 100, n_background: int = 50,
                 n_permutations: int = 1, importance: str = "shap", shap_backend: str = "ours",
                 bandwidth_scale: float = 1.0, random_state=None):
        self.groups = groups
        self.q = q
        self.hidden = hidden
        self.max_iter = max_iter
        self.alpha = alpha
        self.c_grid = c_grid
        self.hsic_samples = hsic_samples
        self.n_explain = n_explain
        self.n_background = n_background
        self.n_permutations = n_permutations
        self.importance = importance
        self.shap_backend = shap_backend
        self.bandwidth_scale = bandwidth_scale
        self.random_state = random_state

    def fit(self, X, y, groups=None):
        from sklearn.neural_network import MLPRegressor

        from repro.stats.hsic import choose_mirror_scale
        from repro.stats.permutation_shap import permutation_shap, shap_permutation_explainer, smoothed_derivatives

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        g = groups if groups is not None else self.groups
        groups = np.arange(X.shape[1]) if g is None else np.asarray(g)
        labels, blocks = group_index(groups)
        rng = np.random.default_rng(self.random_state)
        n, P = X.shape
        Z = rng.standard_normal(X.shape)
        sd = X.std(0)
        self.c_ = np.empty(len(blocks))
        Xp, Xm = np.empty_like(X), np.empty_like(X)
        rows = rng.choice(n, size=min(n, self.hsic_samples), replace=False)
        for k, J in enumerate(blocks):
            self.c_[k] = choose_mirror_scale(X[rows], J, Z[rows], sd, self.c_grid)
            Xp[:, J] = X[:, J] + self.c_[k] * Z[:, J] * sd[J]
            Xm[:, J] = X[:, J] - self.c_[k] * Z[:, J] * sd[J]
        design = np.hstack([Xp, Xm])  # columns 0..P-1: plus copies, P..2P-1: minus copies
        y_mean, y_sd = y.mean(), y.std() or 1.0
        net = MLPRegressor(hidden_layer_sizes=tuple(self.hidden), alpha=self.alpha, max_iter=self.max_iter,
                           early_stopping=True, random_state=int(rng.integers(2**31)))
        net.fit(design, (y - y_mean) / y_sd)
        self.model_ = net
        if self.importance == "weights":
            score = _connection_weights(net)  # (2P,) signed NGM-style importance
            D = score[None, :]
        elif self.importance == "shap":
            explain = design[rng.choice(n, size=min(n, self.n_explain), replace=False)]
            background = design[rng.choice(n, size=min(n, self.n_background), replace=False)]
            if self.shap_backend == "ours":
                phi = permutation_shap(net.predict, explain, background, n_permutations=self.n_permutations,
                                       rng=rng)
            elif self.shap_backend == "shap":
                phi = shap_permutation_explainer(net.predict, explain, background,
                                                 n_permutations=self.n_permutations,
                                                 seed=int(rng.integers(2**31)))
            else:
                raise ValueError(f"shap_backend must be 'ours' or 'shap', got {self.shap_backend!r}")
            D = smoothed_derivatives(explain, phi, bandwidth_scale=self.bandwidth_scale)  # (m, 2P)
        else:
            raise ValueError(f"importance must be 'shap' or 'weights', got {self.importance!r}")
        self.derivatives_ = D
        self.groups_ = labels
        self.statistics_ = np.array([block_statistic(D[:, J], D[:, P + J]) for J in blocks])
        self.threshold_ = data_adaptive_threshold(self.statistics_, self.q)
        self.selected_ = labels[self.statistics_ >= self.threshold_]
        return self

    def select(self, q: float | None = None) -> np.ndarray:
        check_is_fitted(self, "statistics_")
        tau = data_adaptive_threshold(self.statistics_, self.q if q is None else q)
        return self.groups_[self.statistics_ >= tau]


def _connection_weights(net) -> np.ndarray:
    """NGM's signed importance of each input: the product of the layer weight matrices (Olden's method)."""
    w = net.coefs_[0]
    for layer in net.coefs_[1:]:
        w = w @ layer
    return w[:, 0]


# ----------------------------------------------------------------------------- helpers


def _sym_sqrt(S: np.ndarray, inverse: bool = False) -> np.ndarray:
    vals, vecs = np.linalg.eigh((S + S.T) / 2)
    if np.any(vals <= 0):
        raise ValueError("a block's residual Gram matrix is singular: a column is a linear combination of the others")
    power = -0.5 if inverse else 0.5
    return (vecs * vals**power) @ vecs.T


def _check_xyz(X, y, Z):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    Z = np.asarray(Z, dtype=float)
    if X.ndim != 2 or Z.shape != X.shape or y.shape[0] != X.shape[0]:
        raise ValueError(f"shapes do not match: X {X.shape}, y {y.shape}, Z {Z.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X or y contains NaN or inf")
    return X, y, Z
