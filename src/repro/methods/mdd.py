"""Multimodal dataset distillation (MDD) in a frozen feature space: the pieces every method shares.

- :class:`DistilledSet`: ``n`` synthetic (or selected) pairs, image-feature and text-feature
  vectors in the standardised feature space of the frozen encoders, optionally with a learned
  ``n x n`` similarity target (LoRS) and the seeds of the initialisations the distillation saw.
- :class:`DualProjection`: the retrieval student, an image head and a text head into a shared
  ``embed_dim`` space. ``projection="asymmetric"`` (MDA-DD's asymmetric dual projection: an MLP on
  the 1280-d image side, one linear map on the 384-d text side, whose sentence embeddings are
  already semantic) or ``"symmetric"`` (an MLP on both sides, the redundant variant).
- :func:`train_heads` / :func:`evaluate_distilled`: train the student on a distilled set with the
  symmetric InfoNCE loss (CLIP; both directions weighted equally, so image->text and text->image
  stay balanced) from several initialisations, and score TR/IR@K on the real test split.
- ``DISTILLERS``: the registry of methods (``{method}`` wildcard): ``mdadd``, ``mdadd_noqueue``
  (:mod:`repro.methods.mdadd`), ``random``, ``herding``, ``covmatch``, ``lors``, ``full``
  (:mod:`repro.methods.mdd_baselines`). Each is ``f(train: SplitFeatures, n_pairs, cfg, seed) ->
  DistilledSet``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from repro.data.caption_features import SplitFeatures
from repro.metrics.retrieval import retrieval_recall
from repro.registry import Registry
from repro.seeding import job_seed, torch_generator

__all__ = ["DistilledSet", "StudentConfig", "DualProjection", "make_student", "contrastive_loss", "Standardizer",
           "train_heads", "evaluate_heads", "evaluate_distilled", "DISTILLERS", "distill", "sample_real_pairs",
           "config_from_dict"]

log = logging.getLogger(__name__)

DISTILLERS = Registry("distillation method")


@dataclass
class DistilledSet:
    """``n`` pairs in the standardised feature space; ``targets`` is an optional (n, n) similarity label."""

    image: np.ndarray  # (n, Dx) float32
    text: np.ndarray  # (n, Dt) float32
    targets: np.ndarray | None = None  # (n, n) float32 learned similarity (LoRS), else None = identity
    seen_seeds: list[int] = field(default_factory=list)  # student initialisations used while distilling
    trace: list[float] = field(default_factory=list)  # objective per iteration

    def __post_init__(self) -> None:
        if len(self.image) != len(self.text):
            raise ValueError(f"distilled set: {len(self.image)} images but {len(self.text)} texts")
        if self.targets is not None and self.targets.shape != (len(self.image),) * 2:
            raise ValueError(f"distilled set: targets {self.targets.shape} for {len(self.image)} pairs")

    def __len__(self) -> int:
        return len(self.image)

    def save(self, path) -> None:
        from repro.io import atomic_path

        extra = {} if self.targets is None else {"targets": self.targets}
        with atomic_path(path) as tmp:
            np.savez(tmp, image=self.image, text=self.text, seen_seeds=np.asarray(self.seen_seeds, np.int64),
                     trace=np.asarray(self.trace, np.float64), **extra)

    @classmethod
    def load(cls, path) -> "DistilledSet":
        with np.load(path) as z:
            return cls(image=z["image"], text=z["text"], targets=z["targets"] if "targets" in z else None,
                       seen_seeds=[int(s) for s in z["seen_seeds"]], trace=[float(v) for v in z["trace"]])


class Standardizer:
    """Centre each modality on its train mean and divide by one scalar: the per-coordinate RMS.

    One scalar per modality (not a z-score per coordinate) keeps the encoder's geometry; after it
    the mean squared coordinate is 1, so one learning rate suits both modalities' synthetic vectors.
    """

    def fit(self, image: np.ndarray, text: np.ndarray) -> "Standardizer":
        self.mu_x_, self.mu_t_ = image.mean(0), text.mean(0)
        self.s_x_ = float(np.sqrt(((image - self.mu_x_) ** 2).mean()))
        self.s_t_ = float(np.sqrt(((text - self.mu_t_) ** 2).mean()))
        if self.s_x_ == 0 or self.s_t_ == 0:
            raise ValueError("Standardizer: a modality has constant features")
        return self

    def transform(self, image: np.ndarray, text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (((image - self.mu_x_) / self.s_x_).astype(np.float32),
                ((text - self.mu_t_) / self.s_t_).astype(np.float32))


def standardised(train: SplitFeatures, *others: SplitFeatures) -> list[SplitFeatures]:
    """``train`` and ``others`` standardised with the train statistics (images and captions)."""
    st = Standardizer().fit(train.image, train.text)
    out = []
    for s in (train, *others):
        x, t = st.transform(s.image, s.text)
        out.append(SplitFeatures(image=x, text=t, caption_image=s.caption_image))
    return out


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


def sample_real_pairs(train: SplitFeatures, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random real (image, caption) pairs, distinct images where possible; (n, Dx), (n, Dt)."""
    n_img = len(train.image)
    imgs = rng.choice(n_img, size=n, replace=n > n_img)
    caps = np.empty(n, np.int64)
    by_image = _captions_by_image(train.caption_image, n_img)
    for j, i in enumerate(imgs):
        caps[j] = rng.choice(by_image[i])
    return train.image[imgs].copy(), train.text[caps].copy()


def _captions_by_image(caption_image: np.ndarray, n_img: int) -> list[np.ndarray]:
    order = np.argsort(caption_image, kind="stable")
    return np.split(order, np.searchsorted(caption_image[order], np.arange(1, n_img)))


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


def evaluate_distilled(dset: DistilledSet, test: SplitFeatures, cfg: StudentConfig, *, seed: int, n_unseen: int,
                       n_seen: int, steps: int, lr: float, batch_size: int) -> dict[str, list[dict[str, float]]]:
    """Recalls of students trained on ``dset`` from unseen and from seen initialisations.

    Unseen seeds are drawn from ``seed`` (a stream disjoint from any distillation seed with
    probability 1 - 2^-60); seen seeds are the first ``n_seen`` of ``dset.seen_seeds`` (none for
    methods that use no student while distilling).
    """
    unseen = [job_seed(seed, "unseen", i) for i in range(n_unseen)]
    seen = list(dset.seen_seeds[:n_seen])
    out: dict[str, list[dict[str, float]]] = {"unseen": [], "seen": []}
    for kind, seeds in (("unseen", unseen), ("seen", seen)):
        for s in seeds:
            model = train_heads(dset.image, dset.text, cfg, seed=s, steps=steps, lr=lr, batch_size=batch_size,
                                targets=dset.targets, data_seed=job_seed(seed, "data", s))
            rec = evaluate_heads(model, test)
            log.info("%s init %d: %s", kind, s, {k: round(v, 2) for k, v in rec.items()})
            out[kind].append(rec)
    return out


def config_from_dict(cls, d: dict, name: str):
    """``cls(**d)`` for a frozen config dataclass; unknown keys are a ``ValueError`` naming ``name``."""
    from dataclasses import fields

    unknown = set(d) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"{name} config: unknown keys {sorted(unknown)}")
    return cls(**d)


def distill(method: str, train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    """Run registered method ``method`` on the standardised train split; returns ``n_pairs`` pairs."""
    import repro.methods.mdadd  # noqa: F401  (registers mdadd, mdadd_noqueue)
    import repro.methods.mdd_baselines  # noqa: F401  (registers the baselines)

    if n_pairs < 1 and method != "full":
        raise ValueError(f"n_pairs must be >= 1, got {n_pairs}")
    return DISTILLERS.get(method)(train, n_pairs, cfg, seed)
