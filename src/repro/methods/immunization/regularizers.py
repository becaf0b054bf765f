"""Training signals of the immunization methods, for a linear probe on features z = x @ theta.

For the squared loss of a linear probe w on z the Hessian in w is S = theta^T Sigma theta / n with
Sigma the (uncentred) feature second moment, so its condition number is that of X @ theta.

Condition-number baseline (Zheng et al., ICML 2025), on M = X @ theta with p its column count:
- R_well(M) = 1/2 sigma_max(M)^2 - 1/(2p) ||M||_F^2 >= 0, zero iff every singular value is equal
  (kappa = 1); minimised on the benign task. The bound it controls: sigma_max^2 = 2 R_well + mean_i
  sigma_i^2, so kappa(M)^2 = (2 R_well + ||M||_F^2 / p) / sigma_min^2.
- R_ill(M) = 1 / (1/(2p) ||M||_F^2 - 1/2 sigma_min(M)^2): minimising it pushes the mean squared
  singular value away from the smallest one (the harmful task's kappa grows); minimised on the
  harmful task.
These match the gradients in the reference code (utils/loss.py, S1_gradients / S2_gradients: the
sigma_max / sigma_min singular-vector terms minus S / p). DEVIATIONS: the reference's training loss
(models/model.py ``reg_loss``) applies r1 / r2 to the feature Gram matrix S = Phi^T Phi (the
unnormalised probe Hessian; its eigenvalues are sigma_i(M)^2, so r1 = (sigma_max^4 - mean sigma_i^4) / 2,
eigenvalues of S + 1e-6 I); here they act on the features M = X @ theta themselves (sigma_i, not
sigma_i^2; both vanish exactly at kappa = 1 and grow with the spread of the spectrum, but the
reference weighs the top of the spectrum more); the reference's S2 normaliser uses ||S||_F / (2p) +
sigma_min^2 / 2, read here as the derivative of R_ill above.
The relative immunization ratio (RIR) of the reference is not reported: the rebuild reads the
adversary's accuracy curve instead (what the spec's claims and Fig. 1 measure).

Ours (plateau + curvature conditioning): the same two curvature terms plus a plateau term, the mean
squared gradient norm of the harmful loss over Gaussian perturbations of the probe weights
(``plateau``): a small value means the adversary starts on a flat region from every nearby point.
"""

from __future__ import annotations

import torch

__all__ = ["r_well", "r_ill", "plateau"]


def _check(m: torch.Tensor) -> None:
    if m.ndim != 2 or m.shape[0] < m.shape[1]:
        raise ValueError(f"need a tall 2-D matrix (n >= p); got shape {tuple(m.shape)}")


def r_well(m: torch.Tensor) -> torch.Tensor:
    """1/2 sigma_max(M)^2 - 1/(2p) ||M||_F^2 (zero iff M is perfectly conditioned)."""
    _check(m)
    s = torch.linalg.svdvals(m)
    return 0.5 * s[0] ** 2 - 0.5 * (s ** 2).mean()


def r_ill(m: torch.Tensor) -> torch.Tensor:
    """1 / (1/(2p) ||M||_F^2 - 1/2 sigma_min(M)^2) (small when M is ill conditioned; inf at kappa = 1)."""
    _check(m)
    s = torch.linalg.svdvals(m)
    return 1.0 / (0.5 * (s ** 2).mean() - 0.5 * s[-1] ** 2)


def plateau(z: torch.Tensor, y: torch.Tensor, w: torch.Tensor, *, radius: float, n_samples: int,
            generator: torch.Generator) -> torch.Tensor:
    """Mean over w' = w + radius * N(0, I) of ||grad_w CE(z @ w', y)||^2 (differentiable in z and w)."""
    if radius < 0 or n_samples < 1:
        raise ValueError(f"plateau: need radius >= 0 and n_samples >= 1; got {radius}, {n_samples}")
    total = z.new_zeros(())
    for _ in range(n_samples):
        wp = w + radius * torch.randn(w.shape, generator=generator, dtype=w.dtype)
        probs = torch.softmax(z @ wp, dim=1)
        onehot = torch.nn.functional.one_hot(y, wp.shape[1]).to(z.dtype)
        g = z.T @ (probs - onehot) / z.shape[0]  # closed-form CE gradient in w
        total = total + (g ** 2).sum()
    return total / n_samples
