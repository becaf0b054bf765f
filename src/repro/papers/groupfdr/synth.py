"""groupfdr's ground truth: grouped designs with planted true groups (lags of autoregressive series).

Each original feature k is a stationary AR(1) series u_k(t) = rho_w u_k(t-1) + e_k(t) whose
innovations are equicorrelated across features (corr rho_b, a common factor). Its block is the
lag vector X_k(t) = (u_k(t-1), ..., u_k(t-d)), so within a block Corr = rho_w^|l-l'| and between
blocks Corr = rho_b rho_w^|l-l'| (unit variances):

    Sigma = [(1 - rho_b) I_p + rho_b 1 1'] kron Toeplitz(rho_w^0, ..., rho_w^{d-1}).

``sampling="iid"`` draws rows independently from N(0, Sigma) (the law of one lag window; the
model-X knockoff baselines get this Sigma); ``sampling="series"`` simulates the series (a VAR(1)
with diagonal transition) and stacks consecutive windows, so rows are dependent as in real data.

Responses: linear y = sum_{k in S} X_k beta_k + eps with beta_kl = s_k * amplitude / sqrt(n)
(one random sign per true group, the same within a group: a correlated grouped signal), or a planted
nonlinear function of the true blocks for the sequential setting. eps ~ N(0, 1), or with
``noise="t3"`` Student t with 3 degrees of freedom scaled to unit variance (heavy tails: finite variance,
infinite fourth moment), the mirror's null symmetry checked beyond Gaussian noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import toeplitz

__all__ = ["GroupedData", "lag_covariance", "simulate_grouped", "NONLINEAR_LINKS", "NOISES"]


@dataclass
class GroupedData:
    X: np.ndarray  # (n, p * d)
    y: np.ndarray  # (n,)
    groups: np.ndarray  # (p * d,) group label of each column, 0..p-1
    true_groups: np.ndarray  # sorted labels of the non-null groups
    Sigma: np.ndarray | None  # the covariance of a row (None when unknown)
    beta: np.ndarray | None  # (p * d,) coefficients of the linear model, None for nonlinear


def lag_covariance(p: int, d: int, rho_within: float, rho_between: float) -> np.ndarray:
    """Sigma of one lag window (see the module docstring)."""
    between = (1 - rho_between) * np.eye(p) + rho_between * np.ones((p, p))
    return np.kron(between, toeplitz(rho_within ** np.arange(d)))


def _tanh_link(blocks):
    return sum(np.tanh(2 * B[:, 0]) + 0.5 * B[:, 1] * B[:, 0] for B in blocks)


def _sine_link(blocks):
    return sum(np.sin(2 * B[:, 0]) + np.abs(B[:, 1]) - np.sqrt(2 / np.pi) for B in blocks)


NONLINEAR_LINKS = {"tanh_interaction": _tanh_link, "sine_abs": _sine_link}

#: Noise laws, each with mean 0 and variance 1.
NOISES = {"gaussian": lambda rng, n: rng.standard_normal(n),
          "t3": lambda rng, n: rng.standard_t(3, size=n) / np.sqrt(3.0)}


def simulate_grouped(n: int, p: int, d: int, *, rho_within: float = 0.5, rho_between: float = 0.0,
                     n_true: int = 10, amplitude: float = 5.0, response: str = "linear",
                     link: str = "tanh_interaction", sampling: str = "iid", noise: str = "gaussian",
                     rng: np.random.Generator) -> GroupedData:
    """Simulate one grouped lag design with ``n_true`` planted groups among ``p``.

    Parameters
    ----------
    n, p, d : rows, original features (groups), lags per feature.
    rho_within, rho_between : lag autocorrelation and cross-feature innovation correlation.
    n_true : number of true groups (chosen uniformly at random).
    amplitude : linear signal size, beta_kl = +-amplitude / sqrt(n); for ``response="nonlinear"`` the
        planted function is multiplied by amplitude / 2.
    response : "linear" or "nonlinear"; link : key of :data:`NONLINEAR_LINKS`.
    sampling : "iid" (rows from N(0, Sigma)) or "series" (consecutive windows of the AR series).
    noise : "gaussian" (N(0, 1)) or "t3" (t_3 / sqrt(3), unit variance).
    """
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {sorted(NOISES)}, got {noise!r}")
    if not 0 <= n_true <= p:
        raise ValueError(f"n_true={n_true} must lie in [0, p={p}]")
    if d < 1 or (response == "nonlinear" and d < 2):
        raise ValueError(f"d={d} lags is too few for response={response!r}")
    for name, r in (("rho_within", rho_within), ("rho_between", rho_between)):
        if not 0 <= r < 1:
            raise ValueError(f"{name}={r} must lie in [0, 1)")
    Sigma = lag_covariance(p, d, rho_within, rho_between)
    if sampling == "iid":
        X = rng.standard_normal((n, p * d)) @ np.linalg.cholesky(Sigma).T
    elif sampling == "series":
        X = _series_windows(n, p, d, rho_within, rho_between, rng)
    else:
        raise ValueError(f"sampling must be 'iid' or 'series', got {sampling!r}")
    groups = np.repeat(np.arange(p), d)
    true = np.sort(rng.choice(p, size=n_true, replace=False))
    beta = None
    if response == "linear":
        beta = np.zeros(p * d)
        signs = rng.choice([-1.0, 1.0], size=n_true)
        for s, k in zip(signs, true):
            beta[k * d:(k + 1) * d] = s * amplitude / np.sqrt(n)
        signal = X @ beta
    elif response == "nonlinear":
        if link not in NONLINEAR_LINKS:
            raise ValueError(f"unknown link {link!r}; known: {sorted(NONLINEAR_LINKS)}")
        signal = amplitude / 2 * NONLINEAR_LINKS[link]([X[:, k * d:(k + 1) * d] for k in true])
    else:
        raise ValueError(f"response must be 'linear' or 'nonlinear', got {response!r}")
    y = signal + NOISES[noise](rng, n)
    return GroupedData(X=X, y=y, groups=groups, true_groups=true, Sigma=Sigma, beta=beta)


def _series_windows(n, p, d, rho_w, rho_b, rng, burn_in=200):
    T = n + d + burn_in
    common = rng.standard_normal(T)
    e = np.sqrt(rho_b) * common[:, None] + np.sqrt(1 - rho_b) * rng.standard_normal((T, p))
    e *= np.sqrt(1 - rho_w**2)  # unit stationary variance
    u = np.empty((T, p))
    u[0] = rng.standard_normal(p) * 1.0
    for t in range(1, T):
        u[t] = rho_w * u[t - 1] + e[t]
    u = u[burn_in:]
    # row t (t = d..d+n-1): (u(t-1), ..., u(t-d)) for each feature, feature-major
    return np.stack([u[d - lag:d - lag + n] for lag in range(1, d + 1)], axis=2).reshape(n, p * d)
