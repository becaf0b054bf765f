"""MDA-DD: multimodal dataset distillation with a dynamic staggered model queue and SOCM.

Paper: "MDA-DD" (NeurIPS 2026; arXiv id not found). Only the abstract is available
(in the NeurIPS 2026 list of abstracts); every component below is designed from
it, and the choices it leaves open are listed.

What the abstract states, and where it is implemented
-----------------------------------------------------
- Feature-matching MDD overfits to the initialisation of the networks used while distilling
  ("initialisation overfitting") -> :class:`ModelQueue`, the **dynamic staggered model queue**: the
  synthetic pairs are matched against ``queue_size`` students at staggered training stages; every
  iteration each student takes one InfoNCE step on real data, and a student that reaches
  ``queue_size * stagger`` steps leaves and a freshly initialised one (new seed) enters. At any
  time the queue holds students of ages ``0, stagger, 2 stagger, ...`` (mod the max age), so the
  synthetic data are shaped by many initialisations and training stages, never one network.
- **Asymmetric dual projection** (fewer redundant projections, balanced bidirectional alignment)
  -> :class:`repro.methods.distill.student.DualProjection` with ``projection="asymmetric"``: one head per
  modality (no separate image->text and text->image projection pairs), an MLP on the 1280-d image
  side and a single linear map on the 384-d text side; the student loss is the symmetric InfoNCE
  (both directions weighted equally) and SOCM matches both modalities' means, so neither direction
  dominates.
- **SOCM** (second-order cross-modal moment) objective, :func:`socm_loss`: with image / text
  embeddings ``A = phi(X_real)`` (n, k), ``B = psi(T_real)`` (n, k) and ``C = phi(X_syn)``,
  ``D = psi(T_syn)`` (m, k)::

      L_SOCM = ||mean(A) - mean(C)||^2 + ||mean(B) - mean(D)||^2
               + lambda * || A^T B / n - C^T D / m ||_F^2                        (1)

  The second-moment term is computed without the k_x x k_t moment matrices (Gram trick):
  ``||A^T B||_F^2 = <A A^T, B B^T>_F``, hence::

      || A^T B / n - C^T D / m ||_F^2 = <AA^T, BB^T>/n^2 - 2 <AC^T, BD^T>/(nm) + <CC^T, DD^T>/m^2   (2)

  which costs O((n + m)^2 (k_x + k_t)) time and O((n + m)^2) memory instead of
  O((n + m) k_x k_t) and O(k_x k_t): linear, not quadratic, in the feature dimension.
  :func:`second_moment_gap` picks the cheaper of (1) and (2) (``mode="auto"``);
  :func:`second_moment_gap_naive` is the textbook formula, used by the tests and by Fig. 3.

The distillation loop, :func:`distill_mdadd`: synthetic image and text vectors (learnable, in the
standardised encoder feature space) start from random real pairs; each iteration samples a real
batch, sums L_SOCM over the queue's students (embeddings of real data without gradient, of
synthetic data with gradient), takes an Adam step on the synthetic vectors, then advances the
queue.

Choices the paper leaves open
-----------------------------
- Moments are matched in each student's joint embedding space (L2-normalised outputs), not in
  the raw encoder space: the queue only matters if the matching space depends on the networks.
- Uncentred second moment E[phi psi^T] plus means (equivalent information to the cross-covariance
  and means, and what "second-order moment" says); lambda = 1.
- Queue size 4, stagger 25 iterations (small preset), students trained with Adam 1e-3 on real
  pairs; entering students are fresh random initialisations (not warm-started).
- Synthetic pairs initialised from random real pairs (as LoRS and CovMatch do).

Deviations
----------
- Frozen pretrained encoders (EfficientNet-Lite0, all-MiniLM-L6-v2) with trainable projection heads
  stand in for the paper's trainable image / text encoders (NFNet / BERT in LoRS' setting); the
  synthetic data are feature vectors, not pixels and tokens.
- The asymmetric dual projection is the student architecture of every method here (distillation
  and evaluation), so the main table does not isolate it; ``student.projection: symmetric`` is the
  ablation switch.
- CPU scale: a synthetic scene corpus of a few thousand images instead of Flickr30K / COCO
  (their loaders exist, :mod:`repro.data.karpathy`; the generator is :mod:`repro.papers.mdadd.synth`).
- Seen vs unseen initialisations: "seen" students are those whose initialisation a method used
  while distilling (the first queue members, the single CovMatch / no-queue student, the LoRS
  experts); "unseen" ones come from a separate seed stream shared by all methods.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch

from repro.config import from_dict
from repro.logs import progress
from repro.methods.distill.core import DISTILLERS, DistilledSet, sample_real_pairs
from repro.methods.distill.features import SplitFeatures
from repro.methods.distill.student import StudentConfig, contrastive_loss, make_student, student_config
from repro.seeding import job_seed, torch_generator

__all__ = ["MDADDConfig", "second_moment_gap", "second_moment_gap_naive", "second_moment_gap_gram", "socm_loss",
           "socm_loss_naive", "ModelQueue", "distill_mdadd", "measure_moment_cost"]

log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------------------
# SOCM objective
# ----------------------------------------------------------------------------------------------
def second_moment_gap_naive(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, D: torch.Tensor) -> torch.Tensor:
    """``||A^T B / n - C^T D / m||_F^2`` by forming both (k_x, k_t) moment matrices."""
    M_real = A.T @ B / A.shape[0]  # (kx, kt)
    M_syn = C.T @ D / C.shape[0]  # (kx, kt)
    return ((M_real - M_syn) ** 2).sum()


def second_moment_gap_gram(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, D: torch.Tensor) -> torch.Tensor:
    """The same quantity through Gram matrices, Eq. (2): no (k_x, k_t) matrix is formed."""
    n, m = A.shape[0], C.shape[0]
    rr = ((A @ A.T) * (B @ B.T)).sum() / (n * n)  # <AA^T, BB^T>; (n, n) Grams
    rs = ((A @ C.T) * (B @ D.T)).sum() / (n * m)  # <AC^T, BD^T>; (n, m)
    ss = ((C @ C.T) * (D @ D.T)).sum() / (m * m)  # <CC^T, DD^T>; (m, m)
    return rr - 2 * rs + ss


def second_moment_gap(A, B, C, D, mode: str = "auto") -> torch.Tensor:
    """Cross-modal second-moment gap; ``mode`` is auto (the cheaper form), gram or naive."""
    if mode == "auto":
        n, m, kx, kt = A.shape[0], C.shape[0], A.shape[1], B.shape[1]
        mode = "gram" if (n * n + n * m + m * m) * (kx + kt) < (n + m) * kx * kt else "naive"
    if mode == "gram":
        return second_moment_gap_gram(A, B, C, D)
    if mode == "naive":
        return second_moment_gap_naive(A, B, C, D)
    raise ValueError(f"second-moment mode must be auto, gram or naive, got {mode!r}")


def socm_loss(A, B, C, D, *, lam: float = 1.0, mode: str = "auto") -> torch.Tensor:
    """SOCM, Eq. (1): first moments of both modalities plus the cross-modal second moment."""
    mean_gap = ((A.mean(0) - C.mean(0)) ** 2).sum() + ((B.mean(0) - D.mean(0)) ** 2).sum()
    return mean_gap + lam * second_moment_gap(A, B, C, D, mode)


def socm_loss_naive(A, B, C, D, *, lam: float = 1.0) -> torch.Tensor:
    """SOCM with the full moment matrices (reference implementation)."""
    return socm_loss(A, B, C, D, lam=lam, mode="naive")


def measure_moment_cost(dims, *, n_real: int, n_syn: int, reps: int, seed: int) -> list[dict]:
    """Measured time of the second-moment gap (forward + backward to the synthetic side) against dimension.

    For each ``d`` in ``dims`` (``k_x = k_t = d``), one warm-up run of each form, then ``reps``
    timing repeats; in repeat ``r`` the two forms (``socm``: Gram form, Eq. (2); ``naive``: the
    full moment matrices) are timed back to back, so that a repeat's two times see the same machine
    load (the forms are compared paired by repeat). One row per (dim, form, repeat): the wall time,
    and the memory of the intermediates each form allocates (float32: ``2 d^2`` moment entries for
    naive, ``2 (n^2 + nm + m^2)`` Gram entries for SOCM; computed, not sampled from the allocator),
    and the largest relative difference between the two forms' values (they are the same quantity).
    Fig. 3 plots the minimum over repeats (:func:`repro.papers.mdadd.experiment.cost_table`).
    """
    import time

    gen = torch_generator(seed)
    forms = (("socm", second_moment_gap_gram, 2 * (n_real**2 + n_real * n_syn + n_syn**2)),
             ("naive", second_moment_gap_naive, None))
    rows = []
    for d in dims:
        A, B = torch.randn(n_real, d, generator=gen), torch.randn(n_real, d, generator=gen)
        C0, D0 = torch.randn(n_syn, d, generator=gen), torch.randn(n_syn, d, generator=gen)
        values: dict[str, float] = {}
        times: dict[str, list[float]] = {form: [] for form, _, _ in forms}
        for r in range(reps + 1):  # r = 0 is the warm-up
            for form, fn, _ in forms:
                C, D = C0.clone().requires_grad_(True), D0.clone().requires_grad_(True)
                t0 = time.perf_counter()
                val = fn(A, B, C, D)
                val.backward()
                elapsed = time.perf_counter() - t0
                if r:
                    times[form].append(elapsed)
                values[form] = float(val.detach())
        rel = abs(values["socm"] - values["naive"]) / max(abs(values["naive"]), 1e-12)
        for form, _, mem in forms:
            mem = 2 * d * d if mem is None else mem
            rows += [{"dim": int(d), "form": form, "rep": r, "time_s": float(t), "memory_bytes": 4 * mem,
                      "rel_diff": rel} for r, t in enumerate(times[form])]
        log.info("d=%d: socm %.3g s, naive %.3g s (min of %d; rel diff %.1e)", d, min(times["socm"]),
                 min(times["naive"]), reps, rel)
    return rows


# ----------------------------------------------------------------------------------------------
# Dynamic staggered model queue
# ----------------------------------------------------------------------------------------------
class ModelQueue:
    """Students at staggered training stages; the oldest leaves and a fresh one enters every ``stagger`` steps.

    Parameters
    ----------
    train : SplitFeatures
        Standardised real training features (students train on all real pairs).
    student : StudentConfig
    size : int
        Number of students held at once (1 with ``dynamic=False`` is the single-network ablation).
    stagger : int
        Training steps between the stages of consecutive students; max age = ``size * stagger``.
    dynamic : bool
        Replace students that reach the max age (the queue); False keeps the initial students forever.
    lr, batch_size : float, int
        Adam learning rate and real batch size of the students' InfoNCE steps.
    seed : int
        Stream of initialisation seeds (``job_seed(seed, "student", j)`` for the j-th student to enter).
    """

    def __init__(self, train: SplitFeatures, student: StudentConfig, *, size: int, stagger: int, dynamic: bool,
                 lr: float, batch_size: int, seed: int) -> None:
        if size < 1 or stagger < 1:
            raise ValueError(f"model queue: size and stagger must be >= 1, got {size}, {stagger}")
        self.x_img, self.t_txt = train.pairs()
        self.x_img, self.t_txt = torch.from_numpy(self.x_img), torch.from_numpy(self.t_txt)
        self.student, self.size, self.stagger, self.dynamic = student, size, stagger, dynamic
        self.lr, self.batch_size, self.seed = lr, batch_size, seed
        self.max_age = size * stagger
        self.gen = torch_generator(job_seed(seed, "queue-data"))
        self.entered = 0
        self.members: list[dict] = []
        for i in range(size):  # staggered start: student i is pre-trained for i * stagger steps
            member = self._new_member()
            for _ in range(i * stagger):
                self._train_step(member)
            self.members.append(member)

    @property
    def seen_seeds(self) -> list[int]:
        """Initialisation seeds of every student that has been in the queue, in order of entry."""
        return [job_seed(self.seed, "student", j) for j in range(self.entered)]

    def _new_member(self) -> dict:
        s = job_seed(self.seed, "student", self.entered)
        self.entered += 1
        model = make_student(self.x_img.shape[1], self.t_txt.shape[1], self.student, s)
        model.requires_grad_(True)
        return {"model": model, "opt": torch.optim.Adam(model.parameters(), lr=self.lr), "age": 0, "seed": s}

    def _train_step(self, member: dict) -> None:
        idx = torch.randperm(len(self.x_img), generator=self.gen)[: self.batch_size]
        zx, zt = member["model"](self.x_img[idx], self.t_txt[idx])
        loss = contrastive_loss(zx, zt, self.student.temperature)
        member["opt"].zero_grad()
        loss.backward()
        member["opt"].step()
        member["age"] += 1

    def advance(self) -> None:
        """One real-data step for every student; retire those at the max age (dynamic queue)."""
        for k, member in enumerate(self.members):
            self._train_step(member)
            if self.dynamic and member["age"] >= self.max_age:
                self.members[k] = self._new_member()

    def models(self):
        return [m["model"] for m in self.members]


# ----------------------------------------------------------------------------------------------
# Distillation loop
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MDADDConfig:
    """MDA-DD hyper-parameters (none is given in the abstract; values are ours, see the docstring)."""

    iterations: int = 300
    """Distillation iterations (Adam steps on the synthetic vectors)."""
    lr: float = 0.01
    """Adam learning rate of the synthetic vectors (standardised space: unit RMS per coordinate)."""
    real_batch: int = 256
    """Real pairs per iteration for the moments."""
    queue_size: int = 4
    """Students in the queue."""
    stagger: int = 25
    """Steps between the stages of consecutive students (a new student enters every `stagger` steps)."""
    dynamic: bool = True
    """Students leave and fresh ones enter (the dynamic queue); False = fixed students."""
    model_lr: float = 1e-3
    """Adam learning rate of the students on real data."""
    lam: float = 1.0
    """Weight of the cross-modal second-moment term in SOCM."""
    centred: bool = False
    """Match the cross-covariance (centred) instead of the second moment (CovMatch-style baseline)."""
    moment_mode: str = "auto"
    """auto / gram / naive computation of the second-moment term."""


def distill_mdadd(train: SplitFeatures, n_pairs: int, cfg: MDADDConfig, student: StudentConfig, *,
                  seed: int) -> DistilledSet:
    """Distil ``n_pairs`` synthetic pairs from the standardised ``train`` split (moment matching over a queue).

    Returns a :class:`DistilledSet` whose ``trace`` is the summed objective per iteration and whose
    ``seen_seeds`` are the initialisations of every student used.
    """
    rng = np.random.default_rng(job_seed(seed, "init"))
    xs0, ts0 = sample_real_pairs(train, n_pairs, rng)
    xs = torch.tensor(xs0, requires_grad=True)  # (m, Dx) synthetic image features
    ts = torch.tensor(ts0, requires_grad=True)  # (m, Dt) synthetic text features
    opt = torch.optim.Adam([xs, ts], lr=cfg.lr)
    queue = ModelQueue(train, student, size=cfg.queue_size, stagger=cfg.stagger, dynamic=cfg.dynamic,
                       lr=cfg.model_lr, batch_size=cfg.real_batch, seed=seed)
    xr_all, tr_all = (torch.from_numpy(a) for a in train.pairs())
    gen = torch_generator(job_seed(seed, "batches"))
    trace = []
    for _ in progress(range(cfg.iterations), desc="mdadd", total=cfg.iterations):
        idx = torch.randperm(len(xr_all), generator=gen)[: cfg.real_batch]
        loss = torch.zeros(())
        for model in queue.models():
            model.requires_grad_(False)
            with torch.no_grad():
                A, B = model(xr_all[idx], tr_all[idx])  # (n, k) real embeddings
            C, D = model(xs, ts)  # (m, k) synthetic embeddings
            mean_gap = ((A.mean(0) - C.mean(0)) ** 2).sum() + ((B.mean(0) - D.mean(0)) ** 2).sum()
            if cfg.centred:  # cross-covariance instead of the second moment (CovMatch-style baseline)
                A, B, C, D = A - A.mean(0), B - B.mean(0), C - C.mean(0), D - D.mean(0)
            loss = loss + mean_gap + cfg.lam * second_moment_gap(A, B, C, D, cfg.moment_mode)  # Eq. (1)
            model.requires_grad_(True)
        opt.zero_grad()
        loss.backward()
        opt.step()
        trace.append(float(loss.detach()))
        queue.advance()
    log.info("mdadd: objective %.4g -> %.4g over %d iterations; %d students used", trace[0], trace[-1],
             len(trace), len(queue.seen_seeds))
    return DistilledSet(image=xs.detach().numpy().copy(), text=ts.detach().numpy().copy(),
                        seen_seeds=queue.seen_seeds, trace=trace)


@DISTILLERS.register("mdadd")
def _mdadd(train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    """MDA-DD: SOCM over the dynamic staggered queue."""
    c = from_dict(MDADDConfig, cfg["distill"]["mdadd"], "distill.mdadd")
    return distill_mdadd(train, n_pairs, c, student_config(cfg), seed=seed)


@DISTILLERS.register("mdadd_noqueue")
def _mdadd_noqueue(train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    """Ablation: SOCM against one student trained alongside (queue size 1, never replaced)."""
    c = from_dict(MDADDConfig, cfg["distill"]["mdadd"], "distill.mdadd", queue_size=1, dynamic=False)
    return distill_mdadd(train, n_pairs, c, student_config(cfg), seed=seed)
