"""Baselines of multimodal dataset distillation, registered by name in ``repro.methods.distill.core.DISTILLERS``.

- ``random``: a random real subset of ``n`` (image, caption) pairs (coreset baseline); the subset
  drawn from ``seed`` is the one MDA-DD, CovMatch and LoRS start from with the same seed, so a
  distillation's gain over ``random`` is paired by seed.
- ``herding``: greedy herding (Welling 2009; the iCaRL form, Rebuffi et al. 2017) on the
  concatenated L2-normalised image and text features of all real pairs: the k-th pick minimises
  the distance between the real mean and the mean of the picks.
- ``covmatch``: CovMatch-style feature matching (NeurIPS 2025: cross-covariance matching with
  trainable encoders): means plus the *centred* cross-covariance, computed with the full moment
  matrix, against one student initialisation trained on real data alongside the distillation.
  Same loop as MDA-DD (:func:`repro.methods.distill.mdadd.distill_mdadd`) with ``queue_size=1``,
  ``dynamic=False``, ``centred=True``, ``moment_mode="naive"``.
- ``lors``: LoRS-style (Xu et al., ICML 2024, "Low-Rank Similarity Mining for Multimodal Dataset
  Distillation"): trajectory matching (MTT, Cazenavette et al. 2022) of the student's parameters
  plus a learned similarity label ``Y = I + U V^T`` of rank ``rank`` that replaces the one-hot
  InfoNCE targets; expert trajectories are students trained on real data. At CPU scale the
  experts are our projection heads on frozen features, not NFNet + BERT.
- ``full``: every real training pair (the upper bound; ``n_pairs`` is ignored).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch
from torch.func import functional_call

from repro.config import from_dict
from repro.logs import progress
from repro.methods.distill.core import DISTILLERS, DistilledSet, sample_real_pairs
from repro.methods.distill.features import SplitFeatures
from repro.methods.distill.mdadd import MDADDConfig, distill_mdadd
from repro.methods.distill.student import StudentConfig, contrastive_loss, make_student, student_config
from repro.seeding import job_seed, torch_generator

__all__ = ["herding_select", "LoRSConfig", "distill_lors"]

log = logging.getLogger(__name__)


@DISTILLERS.register("random")
def _random(train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    image, text = sample_real_pairs(train, n_pairs, np.random.default_rng(job_seed(seed, "init")))
    return DistilledSet(image=image, text=text)


def herding_select(features: np.ndarray, n: int) -> np.ndarray:
    """Indices of ``n`` rows picked greedily so that their running mean tracks the mean of all rows.

    Pick k (1-based) minimises ``||mu - (S_{k-1} + f_i) / k||`` over unpicked i, where ``S_{k-1}`` is
    the sum of the previous picks (iCaRL's herding).
    """
    f = np.asarray(features, np.float64)
    if not 1 <= n <= len(f):
        raise ValueError(f"herding: cannot pick {n} of {len(f)} rows")
    mu = f.mean(0)
    f_mu = f @ mu  # <f_i, mu>
    f_sq = (f * f).sum(1)
    s_dot = np.zeros(len(f))  # <S, f_i>
    s_sq = 0.0  # ||S||^2
    picked = np.zeros(len(f), bool)
    out = []
    for k in range(1, n + 1):
        # ||mu - (S + f_i)/k||^2 up to a constant: -2/k <mu, S + f_i> + (||S||^2 + 2 <S, f_i> + ||f_i||^2) / k^2
        score = -2.0 / k * f_mu + (2.0 * s_dot + f_sq) / k**2
        score[picked] = np.inf
        i = int(np.argmin(score))
        picked[i] = True
        out.append(i)
        s_sq += 2.0 * s_dot[i] + f_sq[i]
        s_dot += f @ f[i]
    return np.asarray(out)


@DISTILLERS.register("herding")
def _herding(train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    image, text = train.pairs()
    feats = np.concatenate([image / np.linalg.norm(image, axis=1, keepdims=True),
                            text / np.linalg.norm(text, axis=1, keepdims=True)], axis=1)
    idx = herding_select(feats, n_pairs)
    return DistilledSet(image=image[idx].copy(), text=text[idx].copy())


@DISTILLERS.register("covmatch")
def _covmatch(train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    base = {**cfg["distill"]["mdadd"], **cfg["distill"].get("covmatch", {})}
    c = from_dict(MDADDConfig, base, "distill.covmatch", queue_size=1, dynamic=False, centred=True, moment_mode="naive")
    return distill_mdadd(train, n_pairs, c, student_config(cfg), seed=seed)


@DISTILLERS.register("full")
def _full(train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    image, text = train.pairs()
    return DistilledSet(image=image.copy(), text=text.copy())


# ----------------------------------------------------------------------------------------------
# LoRS-style: trajectory matching + low-rank similarity labels
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoRSConfig:
    """LoRS at CPU scale (LoRS' Flickr 100-pair setting uses rank 10; other values are ours)."""

    iterations: int = 150
    """Distillation iterations."""
    lr: float = 0.01
    """Adam learning rate of the synthetic vectors."""
    lr_labels: float = 0.01
    """Adam learning rate of the low-rank label factors U, V."""
    rank: int = 10
    """Rank of the similarity correction U V^T (LoRS: 10 at 100 pairs on Flickr30K)."""
    experts: int = 2
    """Expert trajectories (students trained on real data from different seeds)."""
    expert_steps: int = 200
    """Adam steps per expert."""
    checkpoint_every: int = 20
    """Steps between saved expert checkpoints."""
    syn_steps: int = 10
    """Unrolled student steps on the synthetic set per iteration (MTT's N)."""
    expert_span: int = 2
    """Checkpoints between start and target (MTT's M)."""
    max_start: int = 5
    """Start checkpoint drawn from 0..max_start-1 (MTT's T+)."""
    syn_lr: float = 0.05
    """Initial learning rate of the unrolled SGD (learned, as in MTT)."""
    model_lr: float = 1e-3
    """Adam learning rate of the experts."""
    real_batch: int = 256
    """Real batch of the experts."""


def _expert_trajectory(train: SplitFeatures, student: StudentConfig, cfg: LoRSConfig, seed: int) -> list[dict]:
    x, t = (torch.from_numpy(a) for a in train.pairs())
    model = make_student(x.shape[1], t.shape[1], student, seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.model_lr)
    gen = torch_generator(job_seed(seed, "expert-data"))
    ckpts = [{k: v.detach().clone() for k, v in model.named_parameters()}]
    for step in range(1, cfg.expert_steps + 1):
        idx = torch.randperm(len(x), generator=gen)[: cfg.real_batch]
        loss = contrastive_loss(*model(x[idx], t[idx]), student.temperature)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % cfg.checkpoint_every == 0:
            ckpts.append({k: v.detach().clone() for k, v in model.named_parameters()})
    return ckpts


def distill_lors(train: SplitFeatures, n_pairs: int, cfg: LoRSConfig, student: StudentConfig, *, seed: int) -> DistilledSet:
    """Trajectory matching with a learned low-rank similarity label; returns the set and its labels."""
    seeds = [job_seed(seed, "expert", e) for e in range(cfg.experts)]
    trajectories = [_expert_trajectory(train, student, cfg, s) for s in seeds]
    n_ckpt = len(trajectories[0])
    if cfg.max_start + cfg.expert_span > n_ckpt:  # the last start needs its target checkpoint
        raise ValueError(f"lors: max_start + expert_span = {cfg.max_start + cfg.expert_span} exceeds the "
                         f"{n_ckpt - 1} checkpoint intervals of the experts")
    rng = np.random.default_rng(job_seed(seed, "init"))
    xs0, ts0 = sample_real_pairs(train, n_pairs, rng)
    xs = torch.tensor(xs0, requires_grad=True)
    ts = torch.tensor(ts0, requires_grad=True)
    gen = torch_generator(job_seed(seed, "labels"))
    U = (0.01 * torch.randn(n_pairs, cfg.rank, generator=gen)).requires_grad_(True)
    V = torch.zeros(n_pairs, cfg.rank, requires_grad=True)
    log_lr = torch.tensor(float(np.log(cfg.syn_lr)), requires_grad=True)
    opt = torch.optim.Adam([{"params": [xs, ts], "lr": cfg.lr}, {"params": [U, V], "lr": cfg.lr_labels},
                            {"params": [log_lr], "lr": 1e-2}])
    model = make_student(xs.shape[1], ts.shape[1], student, seeds[0])  # structure only; weights come from checkpoints
    eye = torch.eye(n_pairs)
    trace = []
    for _ in progress(range(cfg.iterations), desc="lors", total=cfg.iterations):
        traj = trajectories[int(rng.integers(cfg.experts))]
        start = int(rng.integers(cfg.max_start))
        start_p, target_p = traj[start], traj[start + cfg.expert_span]
        params = {k: v.clone().requires_grad_(True) for k, v in start_p.items()}
        labels = eye + U @ V.T  # (m, m) low-rank similarity mining
        lr = log_lr.exp()
        for _ in range(cfg.syn_steps):  # unrolled SGD on the synthetic set (differentiable)
            zx, zt = functional_call(model, params, (xs, ts))
            inner = contrastive_loss(zx, zt, student.temperature, labels)
            grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
            params = {k: p - lr * g for (k, p), g in zip(params.items(), grads)}
        num = sum(((params[k] - target_p[k]) ** 2).sum() for k in params)
        den = sum(((start_p[k] - target_p[k]) ** 2).sum() for k in params)
        loss = num / den  # normalised parameter-matching loss (MTT)
        opt.zero_grad()
        loss.backward()
        opt.step()
        trace.append(float(loss.detach()))
    labels = (eye + U @ V.T).detach().numpy().astype(np.float32)
    log.info("lors: objective %.4g -> %.4g; learned lr %.3g", trace[0], trace[-1], float(log_lr.detach().exp()))
    return DistilledSet(image=xs.detach().numpy().copy(), text=ts.detach().numpy().copy(), targets=labels,
                        seen_seeds=seeds, trace=trace)


@DISTILLERS.register("lors")
def _lors(train: SplitFeatures, n_pairs: int, cfg: dict, seed: int) -> DistilledSet:
    return distill_lors(train, n_pairs, from_dict(LoRSConfig, cfg["distill"]["lors"], "distill.lors"),
                        student_config(cfg), seed=seed)
