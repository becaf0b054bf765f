"""Post-hoc machine-unlearning baselines and the loss-threshold membership-inference attack.

Each baseline starts from a trained classifier ``model(x) -> logits`` and updates its weights with
access to the forget set (and the retain set); each returns the seconds it took. Same budget for
all: ``epochs`` passes over the forget set (SCRUB, NegGrad, random labels) or the retain set
(fine-tune), minibatches of ``batch_size``, AdamW at ``lr``.

- ``finetune``: continue training on the retain set only ("catastrophic forgetting" baseline).
- ``neggrad``: NegGrad+ (Kurmanji et al. 2023, "Towards Unbounded Machine Unlearning", §5): descend the
  retain loss and ascend the forget loss, ``L = CE(retain) - alpha * CE(forget)``.
- ``random_labels``: fine-tune on the forget set with uniformly drawn wrong labels, mixed with retain
  batches (Golatkar et al. 2020; the "random label" baseline of SalUn, Fan et al. 2024).
- ``scrub``: SCRUB (Kurmanji et al. 2023, Alg. 1): the original model is the teacher; max-steps push
  the student's KL to the teacher *up* on the forget set, min-steps pull it down on the retain set
  with cross-entropy (gamma = 1), ``max_epochs`` of the epochs with max-steps.

- ``salun``: SalUn (Fan et al. 2024, "SalUn: Empowering Machine Unlearning via Gradient-based Weight
  Saliency", Eq. 6-7): the saliency mask keeps the weights whose forget-loss gradient magnitude
  (over the whole forget set, at the original weights) is at least its ``saliency`` quantile
  (paper: the median, i.e. half the weights), then random-label unlearning updates only those.

Choices the papers leave open and we fixed: alpha = 1 for NegGrad+; SCRUB max-steps in the first
half of the epochs; temperature 1 for SCRUB's KL; SalUn's threshold over all weight tensors jointly.

``loss_mia_auc`` is the loss-threshold attack (Yeom et al. 2018): the AUC of ``-loss`` separating
members from held-out non-members. ``ShadowAttack`` is the shadow-model attack (Shokri et al. 2017,
one shadow of the target's architecture): a logistic regression on output features (loss,
confidence, entropy, true-class probability; standardised) learnt from a shadow model's outputs on
its own training data (members) and on data it never saw (non-members), then scored on the target's
outputs. The retain-trained oracle defines the target: forgotten data should score like unseen data
(AUC near 0.5), not like "never predicted".
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from torch import nn

from repro.registry import Registry

__all__ = [
    "UNLEARNERS",
    "ShadowAttack",
    "UnlearnConfig",
    "loss_mia_auc",
    "mia_features",
    "per_example_loss",
    "saliency_mask",
    "unlearn",
]

UNLEARNERS: Registry[Callable[..., None]] = Registry("unlearning baseline")


@dataclass(frozen=True)
class UnlearnConfig:
    epochs: int = 5
    batch_size: int = 64
    lr: float = 1e-3
    alpha: float = 1.0     # NegGrad+: weight of the forget-set ascent
    max_frac: float = 0.5  # SCRUB: share of the epochs with max-steps
    saliency: float = 0.5  # SalUn: quantile of |forget-loss gradient| below which a weight is frozen


def _batches(n: int, size: int, gen: torch.Generator) -> list[torch.Tensor]:
    return list(torch.randperm(n, generator=gen).split(size))


def _cycle(n: int, size: int, gen: torch.Generator):
    while True:
        yield from _batches(n, size, gen)


@UNLEARNERS.register("finetune")
def finetune(model, opt, xr, yr, xf, yf, cfg: UnlearnConfig, gen: torch.Generator, n_classes: int) -> None:
    for _ in range(cfg.epochs):
        for b in _batches(len(xr), cfg.batch_size, gen):
            _step(opt, F.cross_entropy(model(xr[b]), yr[b]))


@UNLEARNERS.register("neggrad")
def neggrad(model, opt, xr, yr, xf, yf, cfg: UnlearnConfig, gen: torch.Generator, n_classes: int) -> None:
    retain = _cycle(len(xr), cfg.batch_size, gen)
    for _ in range(cfg.epochs):
        for b in _batches(len(xf), cfg.batch_size, gen):
            r = next(retain)
            _step(opt, F.cross_entropy(model(xr[r]), yr[r]) - cfg.alpha * F.cross_entropy(model(xf[b]), yf[b]))


@UNLEARNERS.register("random_labels")
def random_labels(model, opt, xr, yr, xf, yf, cfg: UnlearnConfig, gen: torch.Generator, n_classes: int) -> None:
    retain = _cycle(len(xr), cfg.batch_size, gen)
    for _ in range(cfg.epochs):
        for b in _batches(len(xf), cfg.batch_size, gen):
            wrong = (yf[b] + torch.randint(1, n_classes, (len(b),), generator=gen)) % n_classes  # never the label
            r = next(retain)
            _step(opt, F.cross_entropy(model(xf[b]), wrong) + F.cross_entropy(model(xr[r]), yr[r]))


def saliency_mask(model: nn.Module, xf: torch.Tensor, yf: torch.Tensor, quantile: float) -> list[torch.Tensor]:
    """SalUn's mask: 1 where |d CE(forget) / d theta| >= its ``quantile`` over every weight, else 0."""
    if not 0 <= quantile < 1:
        raise ValueError(f"SalUn saliency quantile must lie in [0, 1); got {quantile}")
    params = [p for p in model.parameters() if p.requires_grad]
    grads = torch.autograd.grad(F.cross_entropy(model(xf), yf), params)
    flat = torch.cat([g.abs().flatten() for g in grads])
    gamma = torch.quantile(flat, quantile) if len(flat) <= 2**24 else flat.kthvalue(int(quantile * len(flat)) + 1).values
    return [(g.abs() >= gamma).float() for g in grads]


@UNLEARNERS.register("salun")
def salun(model, opt, xr, yr, xf, yf, cfg: UnlearnConfig, gen: torch.Generator, n_classes: int) -> None:
    masks = saliency_mask(model, xf, yf, cfg.saliency)
    params = [p for p in model.parameters() if p.requires_grad]
    retain = _cycle(len(xr), cfg.batch_size, gen)
    for _ in range(cfg.epochs):
        for b in _batches(len(xf), cfg.batch_size, gen):
            wrong = (yf[b] + torch.randint(1, n_classes, (len(b),), generator=gen)) % n_classes
            r = next(retain)
            loss = F.cross_entropy(model(xf[b]), wrong) + F.cross_entropy(model(xr[r]), yr[r])
            opt.zero_grad()
            loss.backward()
            for p, m in zip(params, masks):
                p.grad.mul_(m)  # only salient weights move (AdamW's decay is off: lr * wd * theta would move all)
            opt.step()


@UNLEARNERS.register("scrub")
def scrub(model, opt, xr, yr, xf, yf, cfg: UnlearnConfig, gen: torch.Generator, n_classes: int) -> None:
    teacher = copy.deepcopy(model).eval()

    def kl(x):  # KL(teacher || student), batch mean
        with torch.no_grad():
            t = F.log_softmax(teacher(x), dim=1)
        return F.kl_div(F.log_softmax(model(x), dim=1), t, log_target=True, reduction="batchmean")

    for epoch in range(cfg.epochs):
        if epoch < round(cfg.max_frac * cfg.epochs):
            for b in _batches(len(xf), cfg.batch_size, gen):
                _step(opt, -kl(xf[b]))                                   # max-step on the forget set
        for b in _batches(len(xr), cfg.batch_size, gen)[: max(1, -(-len(xf) // cfg.batch_size))]:
            _step(opt, kl(xr[b]) + F.cross_entropy(model(xr[b]), yr[b]))  # min-step on the retain set


def _step(opt: torch.optim.Optimizer, loss: torch.Tensor) -> None:
    opt.zero_grad()
    loss.backward()
    opt.step()


def unlearn(name: str, model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor],
            forget: tuple[torch.Tensor, torch.Tensor], cfg: UnlearnConfig, seed: int, n_classes: int) -> float:
    """Run baseline ``name`` on ``model`` in place; returns the wall-clock seconds it took."""
    fn = UNLEARNERS.get(name)
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0 if name == "salun" else 0.01)
    fn(model, opt, *retain, *forget, cfg, gen, n_classes)
    model.eval()
    return time.perf_counter() - start


def per_example_loss(logits: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    return F.cross_entropy(logits, y, reduction="none").detach().numpy()


def loss_mia_auc(member_loss: np.ndarray, nonmember_loss: np.ndarray) -> float:
    """AUC of the loss-threshold attack: members are predicted by low loss (Yeom et al. 2018)."""
    if len(member_loss) == 0 or len(nonmember_loss) == 0:
        raise ValueError("the membership attack needs at least one member and one non-member")
    scores = -np.concatenate([member_loss, nonmember_loss])
    truth = np.r_[np.ones(len(member_loss)), np.zeros(len(nonmember_loss))]
    return float(roc_auc_score(truth, scores))


def mia_features(logits: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """Per-example attack features (N, 4): loss, confidence (max prob), entropy, true-class probability."""
    logp = F.log_softmax(logits.detach(), dim=1)
    p = logp.exp()
    true = logp.gather(1, y[:, None])[:, 0]
    return torch.stack([-true, p.max(1).values, -(p * logp).sum(1), true.exp()], dim=1).numpy().astype(np.float64)


class ShadowAttack:
    """Shadow-model membership attack: a logistic regression on :func:`mia_features` of a shadow model."""

    def __init__(self, member_features: np.ndarray, nonmember_features: np.ndarray) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        if len(member_features) < 2 or len(nonmember_features) < 2:
            raise ValueError("the shadow attack needs at least two shadow members and two non-members")
        x = np.concatenate([member_features, nonmember_features])
        truth = np.r_[np.ones(len(member_features)), np.zeros(len(nonmember_features))]
        self.model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(x, truth)

    def auc(self, member_features: np.ndarray, nonmember_features: np.ndarray) -> float:
        """AUC of the attack's membership score separating the target's members from its non-members."""
        if len(member_features) == 0 or len(nonmember_features) == 0:
            raise ValueError("the membership attack needs at least one member and one non-member")
        x = np.concatenate([member_features, nonmember_features])
        truth = np.r_[np.ones(len(member_features)), np.zeros(len(nonmember_features))]
        return float(roc_auc_score(truth, self.model.predict_proba(x)[:, 1]))
