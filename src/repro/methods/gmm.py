"""Isotropic Gaussian mixtures with a known variance: EM, a smooth chart, scores and Fisher information.

The model is p_w(x) = Σ_k π_k N(x; μ_k, σ² I) in R^d with K components, σ known; its parameter
is the weights π (on the simplex) and the means μ (K x d).

- :func:`em_fit`: EM for π and μ at fixed σ (Dempster, Laird and Rubin 1977; Bishop, PRML §9.2),
  warm-started from a given mixture. A component whose weight is exactly 0 stays at 0 (its
  responsibilities vanish): extinction is absorbing. A component with no responsibility mass keeps
  its mean.
- The chart: w = (s, μ) with s_k = sqrt(π_k) for every component but a reference one (the
  heaviest, always alive) and π_ref = 1 - Σ s_k². D = (K - 1) + K d coordinates. In this
  square-root chart the weights' Fisher information stays bounded as a weight goes to 0 (for
  separated components it tends to 4 per coordinate: the multinomial's Fisher metric is 4 I in
  sqrt coordinates), while the Fisher information of a component's mean, π_k / σ² I for separated
  components, vanishes with its weight. At s_k = 0 exactly the score in s_k, 2 s_k (N_k - N_ref)/p,
  vanishes too, so a dead component leaves d + 1 null Fisher directions (the limit 4 is reached
  only for π_k above the other components' density at μ_k, e^{-|Δμ|²/2σ²}). The chart has no
  boundary at s_k = 0, and for any s_k² above that tail density the loss rises like s_k²
  (L(s_k) - L(0) ≈ s_k²: the other components lose the mass s_k²), so at every practical n the
  dead component's weight direction still counts ½ while its mean counts 0: a mixture with m dead,
  separated components sits on a stratum of (practical) RLCT (D - m d) / 2. (Asymptotically, for
  n beyond the inverse tail density, ~e^{32} at 8 σ, the s_k direction turns quartic and counts ¼.)
- :func:`point_scores`: ∇_w log p_w(x) per point in that chart; :func:`loss_and_grad` the mean
  negative log-likelihood L_n and its gradient; :func:`fisher_information` E_{p_w}[score score^T],
  stratified over components (exact weights π_k, ``m`` draws from each component), so that the
  curvature of a component of weight 1e-6 is estimated as well as that of a heavy one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

__all__ = ["Mixture", "em_fit", "to_chart", "from_chart", "chart_size", "point_scores", "loss_and_grad",
           "fisher_information", "mean_block"]

LOG_2PI = float(np.log(2 * np.pi))


@dataclass(frozen=True)
class Mixture:
    """π (K,), μ (K, d) and the known σ of an isotropic Gaussian mixture."""

    weights: np.ndarray
    means: np.ndarray
    sigma: float

    def __post_init__(self):
        w, m = np.asarray(self.weights, float), np.asarray(self.means, float)
        if w.ndim != 1 or m.ndim != 2 or m.shape[0] != w.shape[0]:
            raise ValueError(f"mixture: weights (K,) and means (K, d) disagree: {w.shape} vs {m.shape}")
        if (w < 0).any() or abs(w.sum() - 1) > 1e-8:
            raise ValueError(f"mixture: weights must be >= 0 and sum to 1; got {w.tolist()}")
        if not self.sigma > 0:
            raise ValueError(f"mixture: sigma must be > 0; got {self.sigma}")
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "means", m)

    @property
    def n_components(self) -> int:
        return int(self.weights.shape[0])

    @property
    def dim(self) -> int:
        return int(self.means.shape[1])

    def component_log_densities(self, x: np.ndarray) -> np.ndarray:
        """log N(x; μ_k, σ² I) for every point and component, (n, K)."""
        sq = ((x[:, None, :] - self.means[None, :, :]) ** 2).sum(-1)  # (n, K)
        return -0.5 * sq / self.sigma ** 2 - 0.5 * self.dim * (LOG_2PI + 2 * np.log(self.sigma))

    def log_density(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return logsumexp(self.component_log_densities(x) + np.log(self.weights)[None, :], axis=1)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n points and their component labels (multinomial counts, then Gaussian draws)."""
        labels = rng.choice(self.n_components, size=n, p=self.weights)
        x = self.means[labels] + self.sigma * rng.standard_normal((n, self.dim))
        return x, labels


def responsibilities(mix: Mixture, x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        a = mix.component_log_densities(x) + np.log(mix.weights)[None, :]
    return np.exp(a - logsumexp(a, axis=1, keepdims=True))


def em_fit(x: np.ndarray, init: Mixture, *, max_iter: int = 200, tol: float = 1e-8) -> tuple[Mixture, int]:
    """EM for the weights and means at fixed σ, from ``init``; returns (fit, iterations).

    Stops when the mean log-likelihood improves by less than ``tol``. Implements the E and M steps
    of Bishop (PRML) Eq. (9.23), (9.24), (9.26) with the covariance held at σ² I.
    """
    if x.ndim != 2 or x.shape[1] != init.dim:
        raise ValueError(f"em_fit: data of shape {x.shape} for a mixture in {init.dim} dimensions")
    mix, prev = init, -np.inf
    for it in range(1, max_iter + 1):
        r = responsibilities(mix, x)  # (n, K)
        mass = r.sum(0)
        weights = mass / mass.sum()
        alive = mass > 1e-12 * len(x)
        means = mix.means.copy()
        means[alive] = (r[:, alive].T @ x) / mass[alive, None]
        mix = Mixture(weights, means, mix.sigma)
        ll = float(mix.log_density(x).mean())
        if ll - prev < tol:
            break
        prev = ll
    return mix, it


# ----------------------------------------------------------------------------------------------
# The square-root chart w = (s_k for k != ref, μ flattened)
# ----------------------------------------------------------------------------------------------

def chart_size(n_components: int, dim: int) -> int:
    return (n_components - 1) + n_components * dim


def to_chart(mix: Mixture, ref: int | None = None) -> tuple[np.ndarray, int]:
    """(w, ref): the chart coordinates of ``mix``, reference component the heaviest unless given."""
    ref = int(np.argmax(mix.weights)) if ref is None else int(ref)
    others = [k for k in range(mix.n_components) if k != ref]
    return np.concatenate([np.sqrt(mix.weights[others]), mix.means.ravel()]), ref


def _unpack(w: np.ndarray, ref: int, K: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = w[: K - 1]
    means = w[K - 1:].reshape(K, d)
    others = [k for k in range(K) if k != ref]
    weights = np.empty(K)
    weights[others] = s ** 2
    weights[ref] = 1.0 - np.sum(s ** 2)
    return s, weights, means


def from_chart(w: np.ndarray, ref: int, n_components: int, dim: int, sigma: float) -> Mixture:
    _, weights, means = _unpack(np.asarray(w, float), ref, n_components, dim)
    return Mixture(weights, means, sigma)


def _log_q(w: np.ndarray, ref: int, K: int, d: int, sigma: float, x: np.ndarray):
    """Per point: log N_k (n, K), log p (n,), and the chart pieces; log p is -inf off the simplex."""
    s, weights, means = _unpack(w, ref, K, d)
    sq = ((x[:, None, :] - means[None, :, :]) ** 2).sum(-1)
    log_n = -0.5 * sq / sigma ** 2 - 0.5 * d * (LOG_2PI + 2 * np.log(sigma))
    if weights[ref] <= 0:
        return s, weights, means, log_n, np.full(len(x), -np.inf)
    with np.errstate(divide="ignore"):
        a = log_n + np.log(weights)[None, :]
    top = a.max(1)
    log_p = top + np.log(np.exp(a - top[:, None]).sum(1))  # logsumexp, without scipy's overhead per step
    return s, weights, means, log_n, log_p


def point_scores(w: np.ndarray, ref: int, n_components: int, dim: int, sigma: float, x: np.ndarray) -> np.ndarray:
    """∇_w log p_w(x) for every point, (n, D), in the square-root chart.

    ∂/∂s_k log p = 2 s_k (N_k - N_ref) / p ;  ∂/∂μ_k log p = r_k (x - μ_k) / σ², r_k = π_k N_k / p.
    """
    K, d = n_components, dim
    s, weights, means, log_n, log_p = _log_q(np.asarray(w, float), ref, K, d, sigma, x)
    q = np.exp(log_n - log_p[:, None])  # N_k / p, (n, K)
    others = [k for k in range(K) if k != ref]
    ds = 2 * s[None, :] * (q[:, others] - q[:, [ref]])  # (n, K-1)
    r = q * weights[None, :]
    dmu = r[:, :, None] * (x[:, None, :] - means[None, :, :]) / sigma ** 2  # (n, K, d)
    return np.concatenate([ds, dmu.reshape(len(x), K * d)], axis=1)


def loss_and_grad(w: np.ndarray, ref: int, n_components: int, dim: int, sigma: float, x: np.ndarray):
    """L_n(w) = -mean log p_w(x) and its gradient in the chart (inf and NaN off the simplex)."""
    w = np.asarray(w, float)
    *_, log_p = _log_q(w, ref, n_components, dim, sigma, x)
    loss = -float(log_p.mean())
    if not np.isfinite(loss):
        return np.inf, np.full(w.shape, np.nan)
    return loss, -point_scores(w, ref, n_components, dim, sigma, x).mean(0)


def fisher_information(mix: Mixture, ref: int, *, m: int = 2000, rng: np.random.Generator) -> np.ndarray:
    """I(w) = E_{p_w}[∇ log p ∇ log p^T] in the chart, stratified over components, (D, D).

    Σ_k π_k E_{N_k}[g g^T] with ``m`` draws from each component with π_k > 0 (a component of
    weight 0 contributes nothing, exactly).
    """
    w, ref = to_chart(mix, ref)
    K, d = mix.n_components, mix.dim
    D = chart_size(K, d)
    info = np.zeros((D, D))
    for k in range(K):
        if mix.weights[k] <= 0:
            continue
        x = mix.means[k] + mix.sigma * rng.standard_normal((m, d))
        g = point_scores(w, ref, K, d, mix.sigma, x)
        info += mix.weights[k] * (g.T @ g) / m
    return info


def mean_block(info: np.ndarray, component: int, n_components: int, dim: int) -> np.ndarray:
    """The d x d block of a (D, D) chart matrix in component ``component``'s mean directions."""
    start = (n_components - 1) + component * dim
    return info[start:start + dim, start:start + dim]
