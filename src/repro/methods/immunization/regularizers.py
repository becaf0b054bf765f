"""Training signals of the immunization methods, for a linear probe on features z = x @ theta.

For the squared loss of a linear probe w on z the Hessian in w is S = theta^T Sigma theta / n with
Sigma the (uncentred) feature second moment, so its condition number is that of X @ theta.

Condition-number baseline (Zheng et al., ICML 2025), matched to the loss the reference trains with
(amberyzheng/model-immunization-cond-num ``models/model.py`` ``Model.reg_loss``; the same formula in
``utils/train_imagenet.py`` ``ImmuLoss.upper_bound_loss``): on the features Phi = M (n x p; the
extractor's output, the layer its classifier reads: the linear map's output, the ResNet's pooled
features) it forms the unnormalised Gram matrix S = Phi^T Phi (the probe Hessian
up to 1/n; eigenvalues lambda_i = sigma_i(M)^2), takes the eigenvalues of S + EPS I in float64
(``utils/loss.py`` ``condition_number``, EPS = 1e-6; lambda_min the smallest above EPS, so a
rank-deficient batch's null space is skipped) and with K = p:
- R_well = r1(S) = lambda_max^2 / 2 - ||S||_F^2 / (2p) = (sigma_max^4 - mean_i sigma_i^4) / 2 (+ the
  EPS shift) >= 0, ~0 iff every singular value of M is equal (kappa = 1); minimised on the benign
  task (D1, the reference's kept task). Its gradient in S is lambda_max v v^T - S / p, the
  reference's ``S1_gradients``. The bound it controls: lambda_max^2 = 2 R_well + mean_i lambda_i^2,
  so the probe Hessian's kappa^2 = (2 R_well + ||S||_F^2 / p) / lambda_min^2.
- R_ill = r2(S) = 1 / (||S||_F^2 / (2p) - lambda_min^2 / 2): minimising it pushes the mean squared
  eigenvalue away from the smallest one (the harmful task's kappa grows); minimised on the harmful
  task (D2).
The reference applies both to every mini-batch of its training loop (batch 64), beside the kept
task's classification loss (weight 1; see ``train``). Remaining deviations: (1) S is formed over the
whole training split of each task (full batch) and its value at the release normalises each term
(``train.Objective``), where the reference weights raw values by per-dataset constants (MNIST:
lambda_r1 = 1, lambda_r2 = 5e7; measured at its own start, 784 -> 784 linear, batches of 64, the
weighted r2's gradient is ~3e-5 of r1's, a balance in its data's units that does not transfer to
ours). (2) K = p, the feature width: ``ImmuLoss`` uses the features' width, ``Model.reg_loss`` the
input's (X1.size(-1)), the same for its 784 -> 784 linear extractor. (3) The reference's
``S2_gradients`` (never called in training) normalises by (||S||_F / (2p) + lambda_min^2 / 2)^2, not
the square of r2's denominator; we follow the loss it trains with (autograd of r2). (4) Its linear
extractor preconditions the weight gradient by (X^T X + lambda_reg I)^-1 (``models/linear.py``); our
defences use plain Adam on every extractor. (5) The extremal eigenvalues the terms need (lambda_max of the
benign S for R_well, lambda_min of the harmful S for R_ill; ||S||_F^2 is a sum of squares and needs no
spectrum) come from an estimator, as the paper's abstract asks (efficient Hessian estimation with bounds on
the extremal singular values), where the reference takes every eigenvalue with ``eigvalsh``:
``gram_extremal`` with ``estimator="lanczos"`` runs the shared Lanczos (``curvature.extremal_ritz``, the
estimator the timing figure times) on Hessian-vector products of the probe's quadratic loss
w -> ||M w||^2 / 2, whose Hessian is S, in closed form (M^T (M v): S never formed; ``curvature.hvp``'s
autodiff product is the same vector at ~2.4 ms a product against microseconds), and returns the Rayleigh quotients ||M u||^2 + EPS at the extreme Ritz vectors
u: equal to the Ritz values, and differentiable in M with the gradient 2 M u u^T, the eigenvalue's exact
gradient (Hellmann-Feynman) once u is an eigenvector. The Ritz values bound the spectrum from inside
(Ritz max <= lambda_max, Ritz min >= lambda_min), so a short run under-states R_well and over-states
R_ill. Choice: n_iter is the preset's ``lanczos_iter`` (default min(p, 30); 32 in the paper preset), so that
the run spans the space and is exact up to rounding: on the small preset's releases lambda_max converges in 8
steps but lambda_min, relative to itself, is still off by 0.04-1.4 after 12 of 16 (a diagnostic of the
estimator, docs/papers/immunize.md); the defence logs the estimator's largest error against ``eigvalsh``
during training. ``estimator="exact"`` (the reference's ``eigvalsh``) stays as the named variant and as
that check. Deviation of the estimator from the exact form: its lambda_min is the smallest eigenvalue of
S + EPS I, not the smallest above EPS, so on a rank-deficient S it returns ~EPS where the exact form skips
the null space (our features are full rank: n >> p and no final layer norm). History: until 2026-12-06
the terms used the exact form, and the estimator served only evaluation and the timing figure; in the
first version exact SVDs of X theta.
Until 2026-12-05 this module applied r1 / r2 to M itself (sigma_i, not sigma_i^2), with R_ill
unnormalised (its gradient 1e-3 of R_well's at the release). The reference's S = Phi^T Phi
(``models/model.py`` ``reg_loss``: ``S1 = X1_phi.T @ X1_phi``, r1 / r2 of ``condition_number(S1)``'s
eigenvalues) is what the terms use now: sigma^2, matched, not a deviation.
The relative immunization ratio (RIR) of the reference is not reported: the rebuild reads the
adversary's accuracy curve instead (what the spec's claims and Fig. 1 measure).

Ours (plateau + curvature conditioning): the same two curvature terms plus a plateau term, the mean
squared gradient norm of the harmful loss over Gaussian perturbations of the probe weights
(``plateau``): a small value means the adversary starts on a flat region from every nearby point.
"""

from __future__ import annotations

import torch

from repro.methods.immunization.curvature import extremal_ritz

__all__ = ["EPS", "ESTIMATORS", "gram_spectrum", "gram_extremal", "r_well", "r_ill", "plateau"]

ESTIMATORS = ("lanczos", "exact")


EPS = 1e-6  # the reference's ``lambda_diag``: S + 1e-6 I before its eigenvalues are taken


def _check(m: torch.Tensor) -> None:
    if m.ndim != 2 or m.shape[0] < m.shape[1]:
        raise ValueError(f"need a tall 2-D matrix (n >= p); got shape {tuple(m.shape)}")


def gram_spectrum(m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(eigenvalues of S + EPS I ascending, S) for S = M^T M, in float64 (the reference's ``condition_number``)."""
    _check(m)
    m64 = m.to(torch.float64)
    s = m64.T @ m64
    return torch.linalg.eigvalsh(s + EPS * torch.eye(s.shape[0], dtype=s.dtype)), s


def gram_extremal(m: torch.Tensor, *, estimator: str = "exact", n_iter: int | None = None, seed: int = 0
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """(lambda_min, lambda_max) of S + EPS I, S = M^T M, in float64 and differentiable in ``m``.

    ``exact``: ``eigvalsh`` (``gram_spectrum``), lambda_min the smallest above EPS (the reference).
    ``lanczos``: the Rayleigh quotients ||M u||^2 + EPS at the extreme Ritz vectors u of ``n_iter`` Lanczos
    steps (default min(p, 30)) on the Hessian-vector products M^T (M v) of w -> ||M w||^2 / 2 (module docstring).
    """
    _check(m)
    if estimator == "exact":
        lam, _ = gram_spectrum(m)
        return lam[lam > EPS].min(), lam[-1]
    if estimator != "lanczos":
        raise ValueError(f"gram_extremal: unknown estimator {estimator!r}; known: {', '.join(ESTIMATORS)}")
    m64 = m.to(torch.float64)
    fixed = m64.detach()
    (_, u_min), (_, u_max) = extremal_ritz(lambda v: fixed.T @ (fixed @ v), m.shape[1], n_iter=n_iter, seed=seed)
    quotient = lambda u: ((m64 @ torch.as_tensor(u, dtype=torch.float64)) ** 2).sum() + EPS
    return quotient(u_min), quotient(u_max)


def _frob2_over_2p(m: torch.Tensor) -> torch.Tensor:
    m64 = m.to(torch.float64)
    s = m64.T @ m64
    return (s ** 2).sum() / (2 * s.shape[0])


def r_well(m: torch.Tensor, *, estimator: str = "exact", n_iter: int | None = None, seed: int = 0) -> torch.Tensor:
    """r1 = lambda_max(S + EPS I)^2 / 2 - ||S||_F^2 / (2p), S = M^T M (~0 iff M is perfectly conditioned);
    lambda_max by ``gram_extremal``'s ``estimator``."""
    _, lam_max = gram_extremal(m, estimator=estimator, n_iter=n_iter, seed=seed)
    return (0.5 * lam_max ** 2 - _frob2_over_2p(m)).to(m.dtype)


def r_ill(m: torch.Tensor, *, estimator: str = "exact", n_iter: int | None = None, seed: int = 0) -> torch.Tensor:
    """r2 = 1 / (||S||_F^2 / (2p) - lambda_min^2 / 2), lambda_min the smallest eigenvalue of S + EPS I above EPS
    (``exact``; ``lanczos``: see ``gram_extremal``) (small when M is ill conditioned; inf at kappa = 1)."""
    lam_min, _ = gram_extremal(m, estimator=estimator, n_iter=n_iter, seed=seed)
    return (1.0 / (_frob2_over_2p(m) - 0.5 * lam_min ** 2)).to(m.dtype)


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
