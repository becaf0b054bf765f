"""Immunizing a feature extractor theta (z = f_theta(x); linear, MLP or patch transformer, see ``extractors``),
and the probe adversary that attacks it.

``immunize`` runs Adam on theta for one of the defences (``DEFENCES``); each keeps the benign task
(i) learnable with the reference's task loss, w_task times the cross-entropy of a benign head on the
benign features, the head trained jointly with theta from the release's benign head (``fit_head`` on
f_theta0(X_benign)), and (ii) well conditioned with the condition-number baseline's R_well
(normalised by its value at theta0, so the weights are dimensionless), and adds its harmful-task term:

- ``condnum`` (Zheng et al., ICML 2025): w_ill * R_ill(f_theta(X_harm)) / R_ill(f_theta0(X_harm)), the
  harmful probe Hessian made ill conditioned (R_well and R_ill on the feature Gram matrix Phi^T Phi, as
  the reference; see ``regularizers`` for its definitions and the deviations named there). Their
  extremal eigenvalues come from the Lanczos estimator on Hessian-vector products by default
  (``curvature="lanczos"``), the paper's efficient Hessian estimation, for every defence alike; the
  reference's exact ``eigvalsh`` is the variant ``curvature="exact"``.
- ``ours`` (plateau + curvature conditioning): condnum's terms plus w_plateau times the plateau term
  (mean squared harmful-gradient norm over Gaussian perturbations, radius ``radius``, of the probe
  the adversary starts from: zero), normalised by its value at theta0.
- ``booster`` (Booster-style perturbation defence, Huang et al. 2025): w_booster times the drop of
  the harmful loss after one simulated normalised adversary step of size ``booster_alpha`` on the
  probe (L_H(w0) - L_H(w0 - alpha g / ||g||)); Booster's benign alignment loss is R_well here.

Every defence keeps the benign features' scale: after each step the extractor's output layer (all
of a linear theta) is rescaled so that ||f_theta(X_benign)||_F equals its value at theta0. Without it a defence could shrink every feature
(slowing every later fine-tuning, benign included) or blow up the harmful ones, which no
fine-tuning-speed claim should reward. (A choice of this rebuild; the reference code normalises
nothing and applies the regularisers to the extractor's weight matrix.)

The task loss matches the reference (amberyzheng/model-immunization-cond-num, models/model.py:
``total_loss = reconstruction_error + regularization_loss`` with ``reconstruction_error`` the
classification loss of the kept task D1 through the model's classifier, and ``regularization_loss =
lambda_r1 * r1 + lambda_r2 * r2``; one Adam over the extractor and the classifier; for its pretrained
extractors the classifier is the pretrained head). Weight: w_task = 1, the reference's. Every defence
carries it (the same utility terms for every compared method). Without it (the first version of this
rebuild) nothing ties a non-linear extractor's benign features to the benign labels: R_well only
asks for equal singular values and the rescaling only fixes the overall scale, so on the MLP the
harmful terms, acting on the shared hidden layer, rotated the benign features off the label
directions (docs/papers/immunize.md, the diagnosis of the MLP's benign loss); on a linear extractor
the same terms leave them in place.

``adversary`` fine-tunes a softmax probe on frozen features (or, given theta, the probe and the
extractor together) with SGD or Adam from a given start and reports accuracy on held-out data at
chosen step counts: the slower it rises, the stronger the immunization.
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F

from repro.methods.immunization.extractors import Extractor, LinearExtractor
from repro.methods.immunization.regularizers import ESTIMATORS, gram_extremal, plateau, r_ill, r_well

__all__ = ["DEFENCES", "TERMS", "Objective", "immunize", "adversary", "booster_drop", "fit_head"]

DEFENCES = ("none", "condnum", "booster", "ours")
TERMS = ("r_well", "task", "r_ill", "plateau", "booster")   # in the order a defence's loss sums them
_HARMFUL_TERMS = {"none": (), "condnum": ("r_ill",), "booster": ("booster",), "ours": ("r_ill", "plateau")}


def booster_drop(z: torch.Tensor, y: torch.Tensor, w0: torch.Tensor, alpha: float) -> torch.Tensor:
    """L_H(w0) - L_H(w0 - alpha g / ||g||): how much one normalised harmful step lowers the CE loss."""
    probs = torch.softmax(z @ w0, dim=1)
    g = z.T @ (probs - F.one_hot(y, w0.shape[1]).to(z.dtype)) / z.shape[0]
    w1 = w0 - alpha * g / g.norm().clamp_min(1e-12)
    return F.cross_entropy(z @ w0, y) - F.cross_entropy(z @ w1, y)


def fit_head(z: torch.Tensor, y: torch.Tensor, n_classes: int, steps: int, lr: float,
             w_init: torch.Tensor | None = None) -> torch.Tensor:
    """A softmax head on frozen features ``z``: ``steps`` of full-batch Adam on the cross-entropy from ``w_init`` (zero)."""
    w = (torch.zeros(z.shape[1], n_classes, dtype=z.dtype) if w_init is None else w_init.clone()).requires_grad_(True)
    opt = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(z @ w, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach()


def _linear_for(theta: torch.Tensor) -> Extractor:
    if theta.ndim != 2:
        raise ValueError(f"a flat parameter vector needs its extractor; got theta of shape {tuple(theta.shape)}")
    return LinearExtractor(*theta.shape)


class Objective:
    """The weighted, normalised terms of the defence objective (module docstring), one place for
    ``immunize`` and for the diagnostics that take each term's gradient apart.

    The normalisers are measured at the release ``theta0``: R_well on the benign features, R_ill and the
    plateau term on the harmful features with a generator seeded by ``seed``; the harmful probe
    starts at zero (``w0``). The task term's head is ``fit_task_head`` (the release's benign head).
    R_well and R_ill take their extremal eigenvalues from ``curvature`` (``regularizers.gram_extremal``:
    ``lanczos``, the estimator, by default, ``lanczos_iter`` steps, default min(p, 30); ``exact``, the
    reference's ``eigvalsh``, the named variant), normalisers included; ``estimator_error`` checks the
    estimator against the exact form on the same features.
    """

    def __init__(self, ext: Extractor, theta0: torch.Tensor, x_harm: torch.Tensor, y_harm: torch.Tensor,
                 x_benign: torch.Tensor, *, w_ill: float = 1.0, w_well: float = 1.0, w_plateau: float = 1.0,
                 radius: float = 0.1, n_samples: int = 4, w_booster: float = 1.0, booster_alpha: float = 1.0,
                 w_task: float = 1.0, head_steps: int = 300, head_lr: float = 0.05, curvature: str = "lanczos",
                 lanczos_iter: int | None = None, seed: int = 0) -> None:
        if curvature not in ESTIMATORS:
            raise ValueError(f"Objective: unknown curvature estimator {curvature!r}; known: {', '.join(ESTIMATORS)}")
        self.curvature, self.lanczos_iter, self.seed = curvature, lanczos_iter, seed
        self.w_ill, self.w_well, self.w_plateau, self.w_booster, self.w_task = w_ill, w_well, w_plateau, w_booster, w_task
        self.radius, self.n_samples, self.booster_alpha = radius, n_samples, booster_alpha
        self.head_steps, self.head_lr = head_steps, head_lr
        self.y_harm = y_harm
        self.w0 = torch.zeros(ext.width, int(y_harm.max()) + 1, dtype=theta0.dtype)
        with torch.no_grad():
            self.well0 = r_well(ext.features(theta0, x_benign), **self._estimator()).clamp_min(1e-12)
            self.ill0 = r_ill(ext.features(theta0, x_harm), **self._estimator()).clamp_min(1e-300)
            self.plat0 = plateau(ext.features(theta0, x_harm), y_harm, self.w0, radius=radius, n_samples=n_samples,
                                 generator=torch.Generator().manual_seed(seed)).clamp_min(1e-12)

    def _estimator(self) -> dict:
        return {"estimator": self.curvature, "n_iter": self.lanczos_iter, "seed": self.seed}

    def estimator_error(self, names: tuple[str, ...], zh: torch.Tensor, zb: torch.Tensor) -> float:
        """Largest relative error, |estimate - exact| / exact, of the extremal eigenvalues the terms ``names``
        use (R_well: the benign lambda_max; R_ill: the harmful lambda_min) against ``eigvalsh`` (0 if exact)."""
        if self.curvature == "exact":
            return 0.0
        errs = []
        with torch.no_grad():
            for name, z, end in (("r_well", zb, 1), ("r_ill", zh, 0)):
                if name in names:
                    est = gram_extremal(z, **self._estimator())[end]
                    exact = gram_extremal(z, estimator="exact")[end]
                    errs.append(float(abs(est - exact) / exact))
        return max(errs, default=0.0)

    def terms_of(self, method: str) -> tuple[str, ...]:
        """The terms ``method``'s loss sums, in ``TERMS`` order (the task term only with ``w_task > 0``)."""
        return ("r_well", *(("task",) if self.w_task > 0 else ()), *_HARMFUL_TERMS[method])

    def fit_task_head(self, z_benign: torch.Tensor, y_benign: torch.Tensor) -> torch.Tensor:
        """The benign head the task term starts from: ``fit_head`` on ``z_benign`` (``head_steps`` at ``head_lr``)."""
        return fit_head(z_benign.detach(), y_benign, int(y_benign.max()) + 1, self.head_steps, self.head_lr)

    def term(self, name: str, zh: torch.Tensor, zb: torch.Tensor, *, head: torch.Tensor | None = None,
             y_benign: torch.Tensor | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
        """One weighted term on harmful features ``zh`` and benign features ``zb`` (``task`` needs
        ``head`` and ``y_benign``; ``plateau`` draws its perturbations from ``generator``)."""
        if name == "r_well":
            return self.w_well * r_well(zb, **self._estimator()) / self.well0
        if name == "task":
            return self.w_task * F.cross_entropy(zb @ head, y_benign)
        if name == "r_ill":
            return self.w_ill * r_ill(zh, **self._estimator()) / self.ill0
        if name == "plateau":
            return self.w_plateau * plateau(zh, self.y_harm, self.w0, radius=self.radius, n_samples=self.n_samples,
                                            generator=generator) / self.plat0
        if name == "booster":
            return self.w_booster * booster_drop(zh, self.y_harm, self.w0, self.booster_alpha)
        raise ValueError(f"Objective: unknown term {name!r}; known: {', '.join(TERMS)}")


def immunize(x_harm: torch.Tensor, y_harm: torch.Tensor, x_benign: torch.Tensor, theta0: torch.Tensor, *,
             method: str, steps: int, lr: float, seed: int = 0, extractor: Extractor | None = None,
             y_benign: torch.Tensor | None = None, trace: dict | None = None, **weights) -> tuple[torch.Tensor, float]:
    """(immunized copy of ``theta0``, seconds taken); ``method`` is one of ``DEFENCES``.

    ``extractor`` maps ``theta`` to features (default: linear, ``theta0`` a d x k matrix). ``weights``
    are ``Objective``'s keywords (term weights, ``radius``, ``n_samples``, ``booster_alpha``, ``w_task``,
    ``head_steps``, ``head_lr``, ``curvature``, ``lanczos_iter``; its defaults). The task loss (weight
    ``w_task``; 0 leaves it out) needs the benign labels ``y_benign``; its head starts from ``fit_head``
    on the release's benign features. Given a dict ``trace``, every step checks the curvature estimator
    against the exact form on that step's features (``Objective.estimator_error``, outside the seconds
    reported) and ``trace["estimator_err_max"]`` gets the largest error over the steps.
    """
    w_task = weights.get("w_task", 1.0)
    if method not in DEFENCES:
        raise ValueError(f"immunize: unknown defence {method!r}; known: {', '.join(DEFENCES)}")
    if steps < 0 or lr <= 0 or w_task < 0:
        raise ValueError(f"immunize: need steps >= 0, lr > 0 and w_task >= 0; got {steps}, {lr}, {w_task}")
    if method != "none" and w_task > 0 and (y_benign is None or len(y_benign) != len(x_benign)):
        raise ValueError("immunize: the task loss (w_task > 0) needs y_benign, one label per benign input; got "
                         f"{None if y_benign is None else len(y_benign)} labels for {len(x_benign)} inputs")
    ext = extractor or _linear_for(theta0)
    feat = ext.features
    started = time.perf_counter()
    if method == "none":
        return theta0.clone(), 0.0
    objective = Objective(ext, theta0, x_harm, y_harm, x_benign, seed=seed, **weights)
    names = objective.terms_of(method)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        scale0 = feat(theta0, x_benign).norm()
    theta = theta0.clone().requires_grad_(True)
    trained, head = [theta], None
    if w_task > 0:
        head = objective.fit_task_head(feat(theta0, x_benign), y_benign)
        trained.append(head.requires_grad_(True))
    opt = torch.optim.Adam(trained, lr=lr)
    checking, err_max = 0.0, 0.0
    for _ in range(steps):
        zh, zb = feat(theta, x_harm), feat(theta, x_benign)
        if trace is not None:
            t0 = time.perf_counter()
            err_max = max(err_max, objective.estimator_error(names, zh, zb))
            checking += time.perf_counter() - t0
        terms = [objective.term(n, zh, zb, head=head, y_benign=y_benign, generator=gen) for n in names]
        loss = terms[0]
        for t in terms[1:]:
            loss = loss + t
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            ext.rescale_(theta, scale0 / feat(theta, x_benign).norm())
    if trace is not None:
        trace["estimator_err_max"] = err_max
    return theta.detach(), time.perf_counter() - started - checking


def adversary(z: torch.Tensor, y: torch.Tensor, z_eval: torch.Tensor, y_eval: torch.Tensor, *, optimizer: str,
              lr: float, checkpoints: list[int], w_init: torch.Tensor | None = None, n_classes: int | None = None,
              classes: list[int] | None = None, theta: torch.Tensor | None = None,
              extractor: Extractor | None = None) -> list[float]:
    """Accuracy on (``z_eval``, ``y_eval``) of a softmax probe fine-tuned on (``z``, ``y``), full batch, at each checkpoint.

    The probe starts at ``w_init`` (default zero, ``n_classes`` columns); ``classes`` restricts the
    argmax at evaluation to those columns (the harmful task's own classes). With ``theta`` the
    adversary fine-tunes the extractor too (full fine-tuning of the open weights): ``z`` and
    ``z_eval`` are then the inputs, and the features are ``extractor.features(theta, x)`` (default
    linear: ``x @ theta``) with theta trained jointly.
    """
    if optimizer not in ("sgd", "adam"):
        raise ValueError(f"adversary: optimizer must be 'sgd' or 'adam'; got {optimizer!r}")
    if lr <= 0 or not checkpoints or min(checkpoints) < 0 or list(checkpoints) != sorted(checkpoints):
        raise ValueError(f"adversary: need lr > 0 and sorted non-negative checkpoints; got {lr}, {checkpoints}")
    ext = None if theta is None else (extractor or _linear_for(theta))
    width = z.shape[1] if theta is None else ext.width
    if w_init is None:
        w_init = torch.zeros(width, n_classes or int(y.max()) + 1, dtype=z.dtype)
    w = w_init.clone().requires_grad_(True)
    params = [w] if theta is None else [w, theta.clone().requires_grad_(True)]
    opt = (torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam)(params, lr=lr)
    cols = torch.as_tensor(classes) if classes is not None else torch.arange(w.shape[1])
    features = (lambda x: x) if theta is None else (lambda x: ext.features(params[1], x))

    def accuracy() -> float:
        with torch.no_grad():
            return float((cols[(features(z_eval) @ w)[:, cols].argmax(1)] == y_eval).to(torch.float64).mean())

    out, step = [], 0
    for target in checkpoints:
        while step < target:
            loss = F.cross_entropy(features(z) @ w, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
        out.append(accuracy())
    return out
