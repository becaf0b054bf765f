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

Choices the papers leave open and we fixed: alpha = 1 for NegGrad+; SCRUB max-steps in the first
half of the epochs; temperature 1 for SCRUB's KL.

``loss_mia_auc`` is the loss-threshold attack (Yeom et al. 2018): the AUC of ``-loss`` separating
members from held-out non-members. The retain-trained oracle defines the target: forgotten data
should score like unseen data (AUC near 0.5), not like "never predicted".
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

__all__ = ["UnlearnConfig", "UNLEARNERS", "unlearn", "loss_mia_auc", "per_example_loss"]

UNLEARNERS: Registry[Callable[..., None]] = Registry("unlearning baseline")


@dataclass(frozen=True)
class UnlearnConfig:
    epochs: int = 5
    batch_size: int = 64
    lr: float = 1e-3
    alpha: float = 1.0     # NegGrad+: weight of the forget-set ascent
    max_frac: float = 0.5  # SCRUB: share of the epochs with max-steps


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
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
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
