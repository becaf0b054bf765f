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
X_J and Z_J on X_-J (OLS, or nodewise lasso in high dimension) and S_x = R_x'R_x, S_z = R_z'R_z,

    C_J = S_z^{-1/2} Q S_x^{1/2},   K = S_z^{-1/2} R_z'R_x S_x^{-1/2} = W diag(s) V',
    Q = W D V',  D = diag(sign(w_i'v_i)),

makes the residualised copies U = R_x + R_z C_J and V = R_x - R_z C_J exactly orthogonal (U'V = 0;
proof: C'S_zC = S_x and C'R_z'R_x = S_x^{1/2} V D s V' S_x^{1/2} is symmetric, so the cross terms
cancel). By Frisch-Waugh-Lovell the OLS coefficients (b+, b-) of the two copies in the regression of y
on (X_J + Z_J C_J, X_J - Z_J C_J, X_-J) then have covariance sigma^2 blockdiag((U'U)^-1, (V'V)^-1):
uncorrelated, hence independent under Gaussian noise, and for a null block both have mean 0. Then
the block statistic M_J = ||b+ + b-||_2 - ||b+ - b-||_2 is symmetric about 0 (flip b- -> -b-).
For d = 1, K is a scalar k, Q = D = sign(k) * sign(k) = 1 and C_J = c_j of Xing et al. exactly.

Choices the paper leaves open
-----------------------------
- The matrix perturbation: the polar-type choice above (exact decoupling, d = 1 gives GM's c_j).
- The block norm: Euclidean (``norm="l2"``), as in the spec; ``norm="whitened"`` scales both
  b+ +- b- by the same (U'U)^-1 + (V'V)^-1 inverse square root (still exactly null-symmetric).
- High dimension: residuals by nodewise lasso at the universal level sqrt(2 log P / n) (columns are
  standardised), the y-fit by a lasso whose alpha comes from one 5-fold LassoCV on (X, y) per replicate.
- Neural variant: all blocks are mirrored at once in one network (one fit per replicate, not one per
  block); (x+, x-) of a block are exchangeable in law, so the null symmetry survives. The kernel
  dependence is the biased HSIC (Gretton et al. 2005) of the OLS residuals of X_J +- c Z_J diag(sd) on
  X_-J, RBF kernels with the median heuristic, on at most ``hsic_samples`` rows; grid
  c in [0.25, 2] (NGM). The block importance of a copy is the matrix of smoothed Permutation-SHAP
  derivatives (local-linear slope of each sub-feature's SHAP values against its values, Gaussian
  kernel, Silverman bandwidth) over the explained rows; M_J = ||D+ + D-||_F - ||D+ - D-||_F. For a
  linear model the SHAP derivative is the coefficient, so this is GM's statistic times sqrt(m).

- Threshold: the paper's Eq. 2.5 (no +1) is the default of ``group_gm``. With independent,
  symmetric null signs it controls the modified FDR E[V / (R + 1/q)] exactly (the knockoff argument of
  Barber & Candes 2015 with offset 0) and the FDR only as the number of selections grows; with few
  true groups (tens) it overshoots q. ``offset=1`` (registered as ``group_gm_plus``) is the
  knockoff+ form. ``group_gm_whitened`` uses ``norm="whitened"``. Both variants are ours, reported
  beside the paper's statistic, never instead of it.

Deviations
----------
- NGM scores a copy by connection weights; we use smoothed Permutation-SHAP derivatives (the
  NeurIPS paper's importance). ``importance="weights"`` gives NGM's connection-weight score.
- The reference R package hard-codes q = 0.1 and adds 1 to the FDP denominator; we do neither.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "MirrorConfig",
    "data_adaptive_threshold",
    "select_by_threshold",
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


def fdp_curve(stats: np.ndarray, ts: np.ndarray, *, offset: int = 0) -> np.ndarray:
    """FDP^(t) = (offset + #{M <= -t}) / max(#{M >= t}, 1) at each t of ``ts``."""
    stats = np.asarray(stats, dtype=float)
    ts = np.asarray(ts, dtype=float)
    n_neg = (stats[None, :] <= -ts[:, None]).sum(1)
    n_pos = (stats[None, :] >= ts[:, None]).sum(1)
    return (offset + n_neg) / np.maximum(n_pos, 1)


# ----------------------------------------------------------------------------- coordinate-wise GM


def gm_statistics(X: np.ndarray, y: np.ndarray, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian mirror statistics by OLS, one feature at a time, the direct way (reference path).

    For each j: c_j = sqrt(x_j'(I - P_-j)x_j / z_j'(I - P_-j)z_j) (Xing et al., Eq. 2.4), then the
    least-squares fit of y on (x_j + c_j z_j, x_j - c_j z_j, X_-j) and
    M_j = |b_j+ + b_j-| - |b_j+ - b_j-| (Eq. 2.2). Costs p full regressions; the block code
    (:func:`group_mirror_statistics`) computes the same numbers through partitioned inverses.

    Returns
    -------
    M, c, b_plus, b_minus : arrays of shape (p,)
    """
    X, y, Z = _check_xyz(X, y, Z)
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
                            fit: str = "ols", norm: str = "l2", lasso_alpha: float | None = None,
                            nodewise_alpha: float | None = None, lasso_tol: float = 1e-4,
                            random_state: int = 0) -> dict:
    """Block mirror statistics M_J for every group (OLS or lasso fits).

    Parameters
    ----------
    X : (n, P) design; y : (n,) response; groups : (P,) group label of each column;
    Z : (n, P) standard Gaussian perturbation, column k used for column k of X.
    fit : "ols" or "lasso".
    norm : "l2" or "whitened" (OLS only).
    lasso_alpha, nodewise_alpha, lasso_tol : lasso settings (None: LassoCV / universal level); tol of
        sklearn's coordinate descent.

    Returns
    -------
    dict with ``labels`` (sorted group labels), ``M`` (statistic per label), ``C`` (list of d x d
    perturbations), ``b_plus`` / ``b_minus`` (lists of coefficient vectors).
    """
    X, y, Z = _check_xyz(X, y, Z)
    labels, blocks = group_index(groups)
    if len(groups) != X.shape[1]:
        raise ValueError(f"groups has {len(groups)} labels for {X.shape[1]} columns")
    if fit == "ols":
        return _group_mirror_ols(X, y, Z, labels, blocks, norm)
    if fit == "lasso":
        return _group_mirror_lasso(X, y, Z, labels, blocks, lasso_alpha, nodewise_alpha, lasso_tol, random_state)
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
        proj = lambda v: Rx @ np.linalg.solve(Sx, Rx.T @ v)  # noqa: E731 - projection onto span(R_x)
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


def _group_mirror_lasso(X, y, Z, labels, blocks, alpha, nodewise_alpha, tol, random_state):
    from sklearn.linear_model import Lasso, LassoCV

    n, P = X.shape
    if alpha is None:
        alpha = LassoCV(cv=5, random_state=random_state, alphas=30, max_iter=5000).fit(X, y).alpha_
    if nodewise_alpha is None:
        nodewise_alpha = float(np.sqrt(2 * np.log(P) / n))  # universal level, unit-variance columns
    out = {"labels": labels, "M": np.empty(len(blocks)), "C": [], "b_plus": [], "b_minus": [], "alpha": alpha}
    for g, J in enumerate(blocks):
        rest = np.delete(X, J, axis=1)
        node = Lasso(alpha=nodewise_alpha, max_iter=100_000, tol=tol)
        targets = np.hstack([X[:, J], Z[:, J]])
        resid = targets - node.fit(rest, targets).predict(rest)  # nodewise lasso residuals on X_-J
        d = len(J)
        C = block_perturbation(resid[:, :d], resid[:, d:])
        design = np.hstack([X[:, J] + Z[:, J] @ C, X[:, J] - Z[:, J] @ C, rest])
        coef = Lasso(alpha=alpha, max_iter=100_000, tol=tol).fit(design, y).coef_
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
    regression : {"auto", "ols", "lasso"}
        "auto" uses OLS when n > P + max block size, else the lasso version.
    norm : {"l2", "whitened"}
    offset : int
        0: the paper's threshold (Eq. 2.5); 1: the knockoff+ form (our variant ``group_gm_plus``).
    random_state : int or None
        Seed of the Gaussian perturbations Z.

    Attributes
    ----------
    groups_ : sorted group labels; statistics_ : M per group; threshold_ : tau_q;
    selected_ : selected group labels at ``q``; C_ : perturbation per group; fit_ : the fit used.

    References
    ----------
    Xing, Zhao, Liu (2023), Eq. 2.2-2.5; the block form is described in the module docstring.
    """

    def __init__(self, groups=None, *, q: float = 0.1, regression: str = "auto", norm: str = "l2",
                 lasso_alpha: float | None = None, offset: int = 0, random_state=None):
        self.groups = groups
        self.q = q
        self.offset = offset
        self.regression = regression
        self.norm = norm
        self.lasso_alpha = lasso_alpha
        self.random_state = random_state

    def fit(self, X, y, groups=None):
        X = np.asarray(X, dtype=float)
        g = groups if groups is not None else self.groups
        groups = np.arange(X.shape[1]) if g is None else np.asarray(g)
        rng = np.random.default_rng(self.random_state)
        Z = rng.standard_normal(X.shape)
        mode = self.fit_mode(X, groups)
        res = group_mirror_statistics(X, y, groups, Z, fit=mode, norm=self.norm, lasso_alpha=self.lasso_alpha,
                                      random_state=int(rng.integers(2**31)))
        self.fit_ = mode
        self.groups_ = res["labels"]
        self.statistics_ = res["M"]
        self.C_ = res["C"]
        self.b_plus_, self.b_minus_ = res["b_plus"], res["b_minus"]
        self.threshold_ = data_adaptive_threshold(self.statistics_, self.q, offset=self.offset)
        self.selected_ = self.groups_[self.statistics_ >= self.threshold_]
        return self

    def fit_mode(self, X, groups) -> str:
        if self.regression != "auto":
            return self.regression
        dmax = np.unique(groups, return_counts=True)[1].max()
        return "ols" if X.shape[0] > X.shape[1] + dmax + 10 else "lasso"

    def select(self, q: float | None = None) -> np.ndarray:
        """Selected group labels at level ``q`` (default: the ``q`` given at construction)."""
        check_is_fitted(self, "statistics_")
        tau = data_adaptive_threshold(self.statistics_, self.q if q is None else q, offset=self.offset)
        return self.groups_[self.statistics_ >= tau]


class GaussianMirror(GroupGaussianMirror):
    """Coordinate-wise Gaussian mirror (Xing, Zhao, Liu 2023): every column its own group."""

    def __init__(self, *, q: float = 0.1, regression: str = "auto", lasso_alpha: float | None = None,
                 random_state=None):
        super().__init__(None, q=q, regression=regression, norm="l2", lasso_alpha=lasso_alpha,
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
