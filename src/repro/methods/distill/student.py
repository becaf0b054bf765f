"""The retrieval student of multimodal dataset distillation, and how a distilled set is scored.

- :class:`StudentConfig` / :class:`DualProjection`: an image head and a text head into a shared
  ``embed_dim`` space. ``projection="asymmetric"`` (MDA-DD's asymmetric dual projection: an MLP on
  the 1280-d image side, one linear map on the 384-d text side, whose sentence embeddings are
  already semantic) or ``"symmetric"`` (an MLP on both sides, the redundant variant).
- :func:`contrastive_loss`: the symmetric InfoNCE loss (CLIP; both directions weighted equally, so
  image->text and text->image stay balanced), with optional soft similarity targets (LoRS).
- :func:`train_heads` / :func:`evaluate_distilled`: train the student on a distilled set from
  several initialisations and score TR/IR@K on the real test split.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from repro.config import from_dict
from repro.methods.distill.features import SplitFeatures
from repro.metrics.retrieval import retrieval_recall
from repro.seeding import job_seed, torch_generator

if TYPE_CHECKING:  # annotations only
    from repro.methods.distill.core import DistilledSet

__all__ = ["StudentConfig", "student_config", "DualProjection", "make_student", "contrastive_loss", "train_heads",
           "evaluate_heads", "evaluate_distilled", "evaluation_inits"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StudentConfig:
    """The retrieval student shared by distillation and evaluation."""

    embed_dim: int = 64
    """Dimension of the joint embedding space."""
    image_hidden: int = 256
    """Hidden width of the image MLP (and of the text MLP when symmetric)."""
    projection: str = "asymmetric"
    """asymmetric (MLP image head, linear text head; MDA-DD) or symmetric (MLP on both sides)."""
    temperature: float = 0.07
    """InfoNCE temperature (CLIP's initial value)."""


def student_config(cfg: dict) -> StudentConfig:
    """The ``student`` block of a method's ``cfg`` (defaults where absent); unknown keys are an error."""
    return from_dict(StudentConfig, cfg.get("student"), "student")


class DualProjection(nn.Module):
    """Image and text heads into one space; outputs are L2-normalised embeddings."""

    def __init__(self, dx: int, dt: int, cfg: StudentConfig) -> None:
        super().__init__()
        k, h = cfg.embed_dim, cfg.image_hidden
        self.image = nn.Sequential(nn.Linear(dx, h), nn.GELU(), nn.Linear(h, k))
        if cfg.projection == "asymmetric":
            self.text = nn.Linear(dt, k)
        elif cfg.projection == "symmetric":
            self.text = nn.Sequential(nn.Linear(dt, h), nn.GELU(), nn.Linear(h, k))
        else:
            raise ValueError(f"student.projection must be asymmetric or symmetric, got {cfg.projection!r}")

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return F.normalize(self.image(x), dim=-1), F.normalize(self.text(t), dim=-1)  # (B, k), (B, k)


def make_student(dx: int, dt: int, cfg: StudentConfig, seed: int) -> DualProjection:
    """A student whose initial weights depend only on ``seed`` (PyTorch's default Linear init)."""
    model = DualProjection(dx, dt, cfg)
    gen = torch_generator(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):
                bound = 1.0 / np.sqrt(m.in_features)
                m.weight.uniform_(-bound, bound, generator=gen)
                m.bias.uniform_(-bound, bound, generator=gen)
    return model


def contrastive_loss(zx: torch.Tensor, zt: torch.Tensor, temperature: float,
                     targets: torch.Tensor | None = None) -> torch.Tensor:
    """Symmetric InfoNCE (CLIP, Radford et al. 2021): mean of image->text and text->image terms.

    With ``targets`` (a (B, B) similarity label, LoRS), the one-hot labels are replaced by
    ``softmax(targets / temperature)`` along each direction.
    """
    logits = zx @ zt.T / temperature  # (B, B)
    if targets is None:
        labels = torch.arange(len(zx))
        return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels))
    p_i2t = F.softmax(targets / temperature, dim=1)
    p_t2i = F.softmax(targets.T / temperature, dim=1)
    return 0.5 * (-(p_i2t * F.log_softmax(logits, 1)).sum(1).mean() - (p_t2i * F.log_softmax(logits.T, 1)).sum(1).mean())


def train_heads(image: np.ndarray, text: np.ndarray, cfg: StudentConfig, *, seed: int, steps: int, lr: float,
                batch_size: int, targets: np.ndarray | None = None, data_seed: int = 0) -> DualProjection:
    """Train a student from initialisation ``seed`` on pairs (``image[i]``, ``text[i]``) with Adam."""
    model = make_student(image.shape[1], text.shape[1], cfg, seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x, t = torch.from_numpy(image), torch.from_numpy(text)
    y = None if targets is None else torch.from_numpy(targets)
    n = len(x)
    gen = torch_generator(data_seed)
    for _ in range(steps):
        idx = torch.randperm(n, generator=gen)[:batch_size] if n > batch_size else torch.arange(n)
        zx, zt = model(x[idx], t[idx])
        loss = contrastive_loss(zx, zt, cfg.temperature, None if y is None else y[idx][:, idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


@torch.no_grad()
def evaluate_heads(model: DualProjection, test: SplitFeatures) -> dict[str, float]:
    """TR/IR@1,5,10 and mR of ``model`` on the (standardised) test split."""
    zx, zt = model(torch.from_numpy(test.image), torch.from_numpy(test.text))
    return retrieval_recall((zx @ zt.T).numpy(), test.caption_image)


def evaluation_inits(dset: DistilledSet, *, seed: int, n_unseen: int, n_seen: int) -> dict[str, list[int]]:
    """The initialisation seeds :func:`evaluate_distilled` trains from, by kind (``unseen``, ``seen``).

    Unseen seeds are drawn from ``seed`` alone (a stream disjoint from any distillation seed with
    probability 1 - 2^-60), so two sets evaluated with the same ``seed`` see the same unseen
    students; seen seeds are the first ``n_seen`` of ``dset.seen_seeds`` (none for methods that
    use no student while distilling).
    """
    return {"unseen": [job_seed(seed, "unseen", i) for i in range(n_unseen)], "seen": list(dset.seen_seeds[:n_seen])}


def evaluate_distilled(dset: DistilledSet, test: SplitFeatures, cfg: StudentConfig, *, seed: int, n_unseen: int,
                       n_seen: int, steps: int, lr: float, batch_size: int) -> dict[str, list[dict[str, float]]]:
    """Recalls of students trained on ``dset`` from unseen and from seen initialisations.

    The initialisations are :func:`evaluation_inits`'; the minibatch order of the student of
    initialisation ``s`` is drawn from ``(seed, s)``, the same whatever the distilled set.
    """
    out: dict[str, list[dict[str, float]]] = {"unseen": [], "seen": []}
    for kind, seeds in evaluation_inits(dset, seed=seed, n_unseen=n_unseen, n_seen=n_seen).items():
        for s in seeds:
            model = train_heads(dset.image, dset.text, cfg, seed=s, steps=steps, lr=lr, batch_size=batch_size,
                                targets=dset.targets, data_seed=job_seed(seed, "data", s))
            rec = evaluate_heads(model, test)
            log.info("%s init %d: %s", kind, s, {k: round(v, 2) for k, v in rec.items()})
            out[kind].append(rec)
    return out
