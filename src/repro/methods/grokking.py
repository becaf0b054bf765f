"""Memorisation speed vs generalisation speed across model sizes, and where grokking appears.

Implements "Model Capacity Determines Grokking through Competing Memorisation and Generalisation
Speeds" (arXiv 2605.09724) at CPU scale:

- the small transformer of the paper's code (pre-norm RMSNorm blocks, SwiGLU feed-forward of width
  4d, causal attention, read-out at the last token ``=``);
- AdamW training with early stopping once the 99% thresholds are reached;
- T_mem(P): time to 99% train accuracy on random-label data of equivalent complexity (§3);
  T_gen(P): time to 99% validation accuracy on the modular task;
- the capacity estimate of Morris et al. (2025), adapted as in the paper: bits memorised on random
  labels, ``n log2 V + sum_i log2 p(y_i | x_i)``, regressed on the parameter count P; the slope is
  bits per parameter (the paper reports C = 2.16);
- power laws T(P) = a P^b fitted in log-log space, their crossing, and the grokking threshold (the
  smallest P from which on models grok).

Two sets of definitions (``GrokConfig.variant``)
------------------------------------------------
``reference`` (the default, and what every preset and so every figure and claim uses) follows the
paper's public code (PerceptronV/grokking-capacity: ``models/transformer.py``,
``experiments/speed.py``, ``experiments/groks.py``, ``experiments/capacity.py``,
``data/modular.py``) point by point:

- R1 dropout: only on the feed-forward hidden layer, ``w2(drop(silu(w1 x) * w3 x))``; nothing on
  the attention output, the residual stream or the embeddings. With more than one head the
  reference adds a second output projection (with bias) and a dropout after the attention's
  ``wo``; that is reproduced too. Its parameter count at depth 2, one head, is
  ``32 d^2 + (2 (p + 2) + 5) d``.
- R2 positions: the reference calls a rotary embedding (RoPE, base 1e6) on ``q`` and ``k`` of shape
  (B, heads, T, hs), which the vendored torchtune module reads as (B, T, heads, hs): it rotates by
  the *head* index, not the position, and by the same angle for ``q`` and ``k`` of one head, so
  ``q . k`` is unchanged (exactly the identity at one head, angle 0). The reference model therefore
  has no position signal other than the causal mask, and neither has ours (no embedding, no
  rotation; :func:`rotary` and its test show the equivalence).
- R3 epochs: a fresh permutation per epoch, batches of ``batch_size`` in order and the ragged last
  batch kept, so an epoch is ``ceil(n / batch_size)`` optimiser steps. Times are counted in epochs
  (the paper's unit) and in steps (both recorded); the step cap becomes ``max_steps //
  steps_per_epoch`` whole epochs.
- R4 T_mem: the running train-mode accuracy of an epoch, ``(sum over its batches of correct
  predictions made in train mode, dropout on, before each batch's update) / n``; T_mem is the
  first epoch at which it is >= 99% (the reference's ``saturation_epoch``, patience 0). The train
  time of a modular run (for the grokking delay) is the same running accuracy.
- R5 T_gen: eval-mode validation accuracy after every epoch; the first (1-indexed) epoch at which
  it is >= 99% (the reference's ``grokking_epoch``). A modular run stops at the first epoch where
  running train accuracy and validation accuracy are both >= 99% at once.
- R6 random-label data (in :mod:`repro.papers.grokcap.synth`, ``labels="reference"``): ``n_equiv =
  floor(train_fraction * |table|)`` (``floor(0.5 p (p - 1))`` for division) fresh sequences with all
  four tokens and the label uniform over the ``p + 2`` tokens: ``n log2(p + 2)`` bits.
- R7 capacity runs: dropout 0 (``capacity_dropout``; the reference's capacity default, at which it
  measured C = 2.16), run to a plateau of the running train loss (``capacity_patience`` epochs
  without an absolute drop of 1e-4), bits read in eval mode at the end.

``ours`` keeps the earlier definitions, which remain available for comparison: learned absolute
position embeddings (+4 d parameters), dropout on the attention and feed-forward outputs (the
residual branches, nanoGPT), the ragged last batch dropped (``n // batch_size`` steps per epoch),
accuracy measured in eval mode on the whole set every ``eval_every`` steps (T in steps), and the
capacity run also stopping once train accuracy reaches 99%. The preset's ``labels`` key chooses
the random-label data independently (``permute`` was ours: the modular training inputs with their
labels permuted).

Choices the paper leaves open (both variants)
---------------------------------------------
- Weight decay (settled from the reference's code, not the spec's reading): 1.0 for the modular
  (grokking) runs *and* the random-label speed runs (T_mem); 0.01 for the capacity runs. The
  reference's ``configs/central.yaml`` ("matched weight decay") sets ``weight_decay: 1.0`` in its
  ``defaults`` block, and ``dispatch/config.py`` merges that block over the per-type defaults
  (``_merge(type_defaults, defaults)``), so its speed runs train at 1.0 (its test
  ``test_default_per_type_overrides`` states it; ``consts.py`` calls the per-type 0.01 for speed "a
  historical confound corrected by weight_decay_sweep"). The spec's "0.01 for speed runs" is that
  per-type default. Capacity (``weight_decay_capacity``): central.yaml would give its capacity runs
  1.0 and dropout 0.2 by the same merge, but its analysis pins C to ``consts.C = 2.16`` ("measured
  at dropout=0.0") and does not use those runs' fit; we run capacity at the settings of that
  constant's ``CAPACITY_DEFAULTS`` (weight decay 0.01, dropout 0). Other settings of the central
  configuration, matched: lr 1e-3, betas (0.9, 0.98), batch 512, train fraction 0.5, division,
  both thresholds 99%, a cap of 5,000 epochs for speed and grokking runs (its per-type 200 for
  groks is overridden the same way), capacity runs with patience 100 epochs of the loss.
- A run that does not reach 99% within its cap is *censored* (T > cap), never given the cap as its
  value (the reference stores the cap as the time, flagged ``saturated = False``). Power laws are
  fitted by maximum likelihood with right censoring (a Tobit regression of log T on log P with
  normal errors), which reduces to least squares when nothing is censored; the empirical crossing
  uses per-width medians, where a censored median is the cap (a lower bound), and is reported
  with that caveat.
- Grokking in one run: train and validation accuracy both reach 99%, and validation does so at
  least ``grok_delay_ratio`` (2) times later than training (the paper: generalisation "long after"
  memorisation). The threshold is the smallest grid P from which on a majority of seeds grok at
  every larger width, reported as the geometric mean of that P and the grid point below it.
- Capacity slope: least squares through the origin (bits = C P), with a t-interval from the
  residuals; the intercept model is reported beside it. Capacity data hold
  ``capacity_data_factor`` (4) bits per parameter (the reference sweeps fixed sample counts).

Deviations
----------
- The small preset uses p = 47 and a CPU-sized width grid and cap (800 epochs) instead of p = 97 to
  139, widths 20 to 1000 and 5,000 epochs, lr 3e-3 instead of 1e-3 (so that widths >= 32 reach
  99% within the cap) and a capacity patience of 20 epochs instead of 100 (see ``config.yaml``);
  the paper preset keeps the central configuration's values (one prime, 97, of its ten).
- Capacity runs at weight decay 0.01 and dropout 0 (the settings of the reference's ``consts.C``),
  not the 1.0 and 0.2 its central.yaml would pass them; the reference fits C with an intercept to
  the largest bits per parameter count over its sample sizes, ours through the origin over runs
  holding ``capacity_data_factor`` x P bits.
- Seeds: each run's seed comes from the workflow's job seed, not the reference's global
  ``np.random.seed(42 ..)``, so no single run matches a reference run draw for draw.
- At CPU scale some capacity runs stop at the step cap, which biases C low.

This module is the method and takes its data as arrays: token sequences ``x`` (n, 4) and targets
``y`` (n,) over ``n_tokens`` symbols, the last two being the operator and ``=`` tokens. The paper's
data (``repro.papers.grokcap.synth``), its grid of runs and their aggregation into the paper's
quantities (``repro.papers.grokcap.experiment``) live in the paper's package; build a
:class:`GrokConfig` from a config block with :func:`repro.config.from_dict`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy import optimize, stats

__all__ = [
    "GrokConfig", "GrokTransformer", "count_parameters", "reference_parameter_count", "rotary", "train_run",
    "run_epochs", "fit_power_law", "power_law_crossing", "crossing_point", "grokking_threshold", "capacity_fit",
    "bits_memorised", "TASKS", "VARIANTS",
]

log = logging.getLogger(__name__)

TASKS = ("modular", "random", "capacity")
#: Definitions of the model and the measurement: the paper's public code, or our earlier ones.
VARIANTS = ("reference", "ours")


@dataclass(frozen=True)
class GrokConfig:
    """One run's settings; defaults are the paper's central configuration (configs/central.yaml)."""

    variant: str = "reference"       # model and measurement definitions: reference | ours (module docstring)
    p: int = 97                      # prime modulus (paper: 97 to 139)
    operation: str = "div"           # a / b mod p (addition as a variant)
    train_fraction: float = 0.5      # paper: 0.5
    width: int = 128                 # d_model (paper: widths 20 to 1000)
    depth: int = 2                   # paper: 2 blocks
    heads: int = 1                   # paper: 1 head
    dropout: float = 0.2             # paper: 0.2 (speed and grokking runs)
    capacity_dropout: float = 0.0    # reference capacity runs: 0.0 (consts.py: C = 2.16 measured at dropout 0)
    lr: float = 1e-3                 # AdamW, paper
    beta1: float = 0.9
    beta2: float = 0.98              # paper: betas (0.9, 0.98)
    weight_decay_grok: float = 1.0   # modular task (grokking runs), reference central.yaml
    weight_decay_speed: float = 1.0  # random-label speed runs (T_mem): matched to the grokking runs, as central.yaml
    weight_decay_capacity: float = 0.01  # capacity runs: consts.CAPACITY_DEFAULTS, where C = 2.16 was measured
    batch_size: int = 512            # paper: 512; full batch when the set is smaller
    max_steps: int = 100_000         # step cap: a run that hits it is censored
    eval_every: int = 10             # ours: steps between evaluations (reference: every epoch)
    threshold: float = 0.99          # the 99% accuracy thresholds
    labels: str = "reference"        # random-label data: reference (fresh, uniform over p + 2) | permute | uniform
    capacity_data_factor: float = 4.0  # capacity data hold factor x P bits (> 3.6, Morris et al.'s upper value)
    capacity_patience: int = 50      # capacity run ends after this many epochs (ours: evaluations) without a loss drop
    capacity_max_steps: int = 100_000  # step cap of a capacity run (its bits are read at the end)
    grok_delay_ratio: float = 2.0    # grokking: T_gen >= ratio * T_train (modular task)
    keep_curve_points: int = 200     # accuracy-curve points kept in a run's output


# ----------------------------------------------------------------------------------------------
# Model (small modules; B batch, T = 4 tokens, C = width, nh heads, hs = C / nh)
# ----------------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight  # (B, T, C)


def rotary(x: torch.Tensor, positions: torch.Tensor, base: float = 1e6) -> torch.Tensor:
    """Rotary position embedding (Su et al. 2021) on adjacent pairs of the last axis.

    ``x`` is (..., hs) with ``hs`` even; ``positions`` broadcasts against ``x[..., 0]``. Pair ``i``
    of a vector at position ``m`` is rotated by ``m * base^(-2i / hs)``. Used by the tests to show
    that the reference's call (positions = the head index) leaves attention scores unchanged.
    """
    hs = x.shape[-1]
    if hs % 2:
        raise ValueError(f"rotary: the last axis must be even, got {hs}")
    theta = base ** (-torch.arange(0, hs, 2, dtype=torch.float64, device=x.device) / hs)  # (hs/2,)
    angle = positions.to(torch.float64)[..., None] * theta                          # (..., hs/2)
    cos, sin = angle.cos(), angle.sin()
    x1, x2 = x.double()[..., 0::2], x.double()[..., 1::2]                              # (..., hs/2)
    return torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).flatten(-2).to(x.dtype)


class CausalSelfAttention(nn.Module):
    """Causal attention; ``ours`` drops out its output, ``reference`` does so only with heads > 1."""

    def __init__(self, width: int, heads: int, dropout: float, variant: str) -> None:
        super().__init__()
        if width % heads:
            raise ValueError(f"grokking: width {width} is not divisible by heads {heads}")
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width, bias=False)  # the reference's wq, wk, wv (same init bound)
        self.proj = nn.Linear(width, width, bias=False)     # the reference's wo
        self.dropout = dropout if variant == "ours" else 0.0
        # reference, heads > 1 only: a second projection with bias, then dropout ("project_out")
        self.out = (nn.Sequential(nn.Linear(width, width), nn.Dropout(dropout))
                    if variant == "reference" and heads > 1 else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)                                # 3 x (B, T, C)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)          # (B, nh, T, hs)
        y = self.proj(y.transpose(1, 2).reshape(B, T, C))                    # (B, T, C)
        if self.out is not None:
            y = self.out(y)
        return F.dropout(y, self.dropout, self.training)


class SwiGLU(nn.Module):
    """The paper's feed-forward ``w2(silu(w1 x) * w3 x)``, hidden width 4 C.

    ``reference``: dropout on the hidden layer, before ``w2`` (R1); ``ours``: on the output.
    """

    def __init__(self, width: int, dropout: float, variant: str) -> None:
        super().__init__()
        self.w1 = nn.Linear(width, 4 * width, bias=False)
        self.w3 = nn.Linear(width, 4 * width, bias=False)
        self.w2 = nn.Linear(4 * width, width, bias=False)
        self.hidden_dropout = dropout if variant == "reference" else 0.0
        self.out_dropout = dropout if variant == "ours" else 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.dropout(F.silu(self.w1(x)) * self.w3(x), self.hidden_dropout, self.training)  # (B, T, 4C)
        return F.dropout(self.w2(h), self.out_dropout, self.training)      # (B, T, C)


class Block(nn.Module):
    def __init__(self, width: int, heads: int, dropout: float, variant: str) -> None:
        super().__init__()
        self.norm1, self.attn = RMSNorm(width), CausalSelfAttention(width, heads, dropout, variant)
        self.norm2, self.mlp = RMSNorm(width), SwiGLU(width, dropout, variant)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))                                     # (B, T, C)
        return x + self.mlp(self.norm2(x))                                   # (B, T, C)


class GrokTransformer(nn.Module):
    """Token embedding (+ learned positions in ``ours``), ``depth`` pre-norm blocks, RMSNorm, logits at '='."""

    def __init__(self, n_tokens: int, width: int, depth: int, heads: int, dropout: float = 0.0,
                 seq_len: int = 4, variant: str = "reference") -> None:
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"grokking: unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
        self.tok = nn.Embedding(n_tokens, width)
        # ours: learned absolute positions (nanoGPT); reference: none (R2, its RoPE call is a no-op)
        self.pos = nn.Parameter(torch.randn(seq_len, width) * 0.02) if variant == "ours" else None
        self.blocks = nn.ModuleList(Block(width, heads, dropout, variant) for _ in range(depth))
        self.norm = RMSNorm(width)
        self.head = nn.Linear(width, n_tokens, bias=False)  # logits over all p + 2 tokens, as the paper

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx)                                                    # (B, T, C)
        if self.pos is not None:
            x = x + self.pos[: idx.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, -1]))                                # (B, V): read-out at '='


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def reference_parameter_count(width: int, p: int, depth: int = 2, heads: int = 1) -> int:
    """The reference model's parameter count, read off its modules.

    Embedding and unembedding ``2 (p + 2) d``, final norm ``d``; per block ``wq, wk, wv, wo`` 4 d^2,
    SwiGLU 12 d^2 and two norms 2 d; with heads > 1 also the extra projection ``d^2 + d``. At depth
    2 and one head: ``32 d^2 + (2 (p + 2) + 5) d``.
    """
    d = width
    block = 16 * d * d + 2 * d + (d * d + d if heads > 1 else 0)
    return 2 * (p + 2) * d + d + depth * block


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------

def bits_memorised(logits: torch.Tensor, y: torch.Tensor, n_classes: int) -> float:
    """Morris et al. (2025) memorisation: ``n log2 V + sum_i log2 p(y_i | x_i)`` in bits."""
    logp = F.log_softmax(logits.double(), dim=-1).gather(1, y[:, None]).squeeze(1)  # (n,) nats
    return float(len(y) * math.log2(n_classes) + logp.sum().item() / math.log(2))


@torch.no_grad()
def _evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float, torch.Tensor]:
    was_training = model.training
    model.eval()
    logits = model(x)
    model.train(was_training)
    return float((logits.argmax(-1) == y).float().mean()), float(F.cross_entropy(logits, y)), logits


def _thin(values: list, keep: int) -> list:
    if len(values) <= keep:
        return values
    idx = np.unique(np.linspace(0, len(values) - 1, keep).round().astype(int))
    return [values[i] for i in idx]


def run_epochs(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, *,
               batch_size: int, max_epochs: int, threshold: float, stop: str,
               x_val: torch.Tensor | None = None, y_val: torch.Tensor | None = None,
               patience: int = 100, min_delta: float = 1e-4) -> dict[str, Any]:
    """The reference's training loop and measurement (R3 to R5, R7), one epoch at a time.

    Each epoch draws a permutation from the global torch RNG and takes its batches in order, the
    ragged last one included (``ceil(n / batch_size)`` steps). The epoch's accuracy and loss are
    *running* train-mode values: each batch's predictions are scored before its update, summed
    over the batches and divided by ``n``. Validation accuracy (if given) is measured in eval mode
    after the epoch.

    Parameters
    ----------
    stop : {"both", "train", "plateau"}
        ``both`` (modular task): stop at the first epoch whose running train accuracy and
        validation accuracy are both >= ``threshold``; ``train`` (random labels): at the first epoch
        whose running train accuracy is; ``plateau`` (capacity): after ``patience`` epochs without
        the running loss falling ``min_delta`` below its best.

    Returns
    -------
    dict
        ``t_train`` and ``t_val``: the first (1-indexed) epoch at which running train accuracy,
        resp. validation accuracy, was >= ``threshold`` (None if never); ``epochs``, ``steps``,
        ``steps_per_epoch`` and ``curve``: per epoch ``(epoch, step, train_acc, val_acc, train_loss)``.
    """
    if stop not in ("both", "train", "plateau"):
        raise ValueError(f"run_epochs: unknown stop rule {stop!r}; known: both, train, plateau")
    if stop == "both" and x_val is None:
        raise ValueError("run_epochs: stop='both' needs validation data")
    n = len(y)
    bs = min(batch_size, n)
    steps_per_epoch = math.ceil(n / bs)
    curve: list[tuple[int, int, float, float, float]] = []
    t_train = t_val = None
    best_loss, stale, step, epoch = math.inf, 0, 0, 0
    model.train()
    while epoch < max_epochs:
        perm = torch.randperm(n, device=x.device)
        correct, loss_sum = 0, 0.0
        for i in range(0, n, bs):
            idx = perm[i:i + bs]
            logits = model(x[idx])                                           # train mode: dropout on
            loss = F.cross_entropy(logits, y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            loss_sum += float(loss.detach()) * len(idx)
            correct += int((logits.argmax(-1) == y[idx]).sum())
        epoch += 1
        acc, tr_loss = correct / n, loss_sum / n                             # R4: running train-mode accuracy
        vacc = _evaluate(model, x_val, y_val)[0] if x_val is not None else float("nan")
        curve.append((epoch, step, acc, vacc, tr_loss))
        if t_train is None and acc >= threshold:
            t_train = epoch
        if t_val is None and vacc >= threshold:
            t_val = epoch
        if tr_loss < best_loss - min_delta:
            best_loss, stale = tr_loss, 0
        else:
            stale += 1
        if ((stop == "both" and acc >= threshold and vacc >= threshold) or (stop == "train" and acc >= threshold)
                or (stop == "plateau" and stale >= patience)):
            break
    return {"t_train": t_train, "t_val": t_val, "epochs": epoch, "steps": step, "steps_per_epoch": steps_per_epoch,
            "curve": curve}


def _run_steps(cfg: GrokConfig, task: str, model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor,
               y: torch.Tensor, xv: torch.Tensor | None, yv: torch.Tensor | None, max_steps: int) -> dict[str, Any]:
    """Our earlier loop (variant ``ours``): the ragged batch dropped, eval-mode accuracy every ``eval_every`` steps."""
    n, bs = len(y), min(cfg.batch_size, len(y))
    n_batches = n // bs  # drop the ragged last batch: every step sees bs examples
    curve: list[tuple[int, int, float, float, float]] = []
    t_train = t_val = None
    best_loss, stale = math.inf, 0
    step = 0
    model.train()
    while step < max_steps:
        perm = torch.randperm(n, device=x.device) if n_batches > 1 else None
        for b in range(n_batches):
            idx = perm[b * bs:(b + 1) * bs] if perm is not None else slice(None)
            loss = F.cross_entropy(model(x[idx]), y[idx])                     # full batch when n <= bs
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            if step % cfg.eval_every and step != max_steps:
                continue
            acc, tr_loss, _ = _evaluate(model, x, y)
            vacc = _evaluate(model, xv, yv)[0] if xv is not None else float("nan")
            curve.append((step // n_batches, step, acc, vacc, tr_loss))
            if t_train is None and acc >= cfg.threshold:
                t_train = step
            if t_val is None and vacc >= cfg.threshold:
                t_val = step
            if tr_loss < best_loss * (1 - 1e-3):
                best_loss, stale = tr_loss, 0
            else:
                stale += 1
            done = {"modular": t_train is not None and t_val is not None,
                    "random": t_train is not None,
                    "capacity": t_train is not None or stale >= cfg.capacity_patience}[task]
            if done or step >= max_steps:
                break
        else:
            continue
        break
    return {"t_train": t_train, "t_val": t_val, "epochs": step // n_batches, "steps": step,
            "steps_per_epoch": n_batches, "curve": curve}


def train_run(cfg: GrokConfig, task: str, x_train: np.ndarray | torch.Tensor, y_train: np.ndarray | torch.Tensor,
              x_val: np.ndarray | torch.Tensor | None = None, y_val: np.ndarray | torch.Tensor | None = None, *,
              n_tokens: int, seed: int, n_classes: int | None = None, device: str = "cpu") -> dict[str, Any]:
    """Train one model on one task until its thresholds are reached or its cap.

    Parameters
    ----------
    cfg : GrokConfig
        ``cfg.variant`` chooses the definitions (module docstring): ``reference`` counts time in
        epochs of running train-mode accuracy, ``ours`` in steps of eval-mode accuracy.
    task : {"modular", "random", "capacity"}
        ``modular`` stops once train and validation accuracy reach ``cfg.threshold``; ``random``
        once train accuracy does; ``capacity`` once the train loss stops improving (``ours``: or
        train accuracy reaches the threshold).
    x_train, y_train : array or tensor, (n, 4) and (n,) int64
        Training token sequences and targets.
    x_val, y_val : array or tensor, optional
        Validation data (the modular task only).
    n_tokens : int
        Vocabulary size V: the residues, then the operator and ``=`` tokens (``p + 2``).
    n_classes : int, optional
        Classes the targets are drawn from, over which bits memorised are counted: default ``V``
        for ``capacity`` and ``V - 2`` (the residues) otherwise; random labels of the reference
        kind are uniform over ``V``.
    seed : int
        Seeds the initialisation, dropout and mini-batch order (the global torch RNG is left as found).

    Returns
    -------
    dict
        ``P``; ``t_train`` and ``t_val`` (in ``time_unit``: ``epoch`` or ``step``; None when
        censored) and both ``t_*_epoch`` and ``t_*_step``; ``cap`` (the cap in ``time_unit``),
        ``steps``, ``epochs``, ``steps_per_epoch``, final accuracies and loss, ``bits`` memorised,
        and the thinned accuracy curve.
    """
    if task not in TASKS:
        raise ValueError(f"grokking: unknown task {task!r}; known: {', '.join(TASKS)}")
    if cfg.variant not in VARIANTS:
        raise ValueError(f"grokking: unknown variant {cfg.variant!r}; known: {', '.join(VARIANTS)}")
    if task == "modular" and (x_val is None or y_val is None):
        raise ValueError("grokking: the modular task needs validation data")
    n_classes = n_classes or (n_tokens if task == "capacity" else n_tokens - 2)
    reference = cfg.variant == "reference"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed % (2**63))
        dropout = cfg.capacity_dropout if task == "capacity" else cfg.dropout
        model = GrokTransformer(n_tokens, cfg.width, cfg.depth, cfg.heads, dropout, variant=cfg.variant).to(device)
        wd = {"modular": cfg.weight_decay_grok, "random": cfg.weight_decay_speed,
              "capacity": cfg.weight_decay_capacity}[task]
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), weight_decay=wd,
                                foreach=True)  # one fused update over all tensors: 25% faster on CPU
        x, y = torch.as_tensor(x_train, device=device), torch.as_tensor(y_train, device=device)
        xv = yv = None
        if x_val is not None and y_val is not None:
            xv, yv = torch.as_tensor(x_val, device=device), torch.as_tensor(y_val, device=device)
        n = len(y)
        max_steps = cfg.capacity_max_steps if task == "capacity" else cfg.max_steps
        if reference:
            spe = math.ceil(n / min(cfg.batch_size, n))
            max_epochs = max(max_steps // spe, 1)
            res = run_epochs(model, opt, x, y, batch_size=cfg.batch_size, max_epochs=max_epochs,
                             threshold=cfg.threshold, stop={"modular": "both", "random": "train", "capacity": "plateau"}[task],
                             x_val=xv, y_val=yv, patience=cfg.capacity_patience)
        else:
            res = _run_steps(cfg, task, model, opt, x, y, xv, yv, max_steps)
            spe = res["steps_per_epoch"]
            max_epochs = max_steps // spe
        acc, tr_loss, logits = _evaluate(model, x, y)
    curve = res["curve"]
    if reference:  # times in epochs; steps = epochs x steps per epoch
        t_epoch = {k: res[k] for k in ("t_train", "t_val")}
        t_step = {k: None if v is None else v * spe for k, v in t_epoch.items()}
    else:  # times in steps; an epoch is n // batch_size steps
        t_step = {k: res[k] for k in ("t_train", "t_val")}
        t_epoch = {k: None if v is None else v / spe for k, v in t_step.items()}
    t = t_epoch if reference else t_step
    out = {
        "task": task, "width": cfg.width, "variant": cfg.variant, "P": count_parameters(model), "n_train": n,
        "time_unit": "epoch" if reference else "step", "t_train": t["t_train"], "t_val": t["t_val"],
        "t_train_epoch": t_epoch["t_train"], "t_val_epoch": t_epoch["t_val"],
        "t_train_step": t_step["t_train"], "t_val_step": t_step["t_val"],
        "cap": max_epochs if reference else max_steps, "max_steps": max_epochs * spe if reference else max_steps,
        "max_epochs": max_epochs, "steps": res["steps"], "epochs": res["epochs"], "steps_per_epoch": spe,
        "train_acc": acc, "train_loss": tr_loss, "val_acc": curve[-1][3] if curve else float("nan"),
        "running_train_acc": curve[-1][2] if curve else float("nan"),
        "bits": bits_memorised(logits, y, n_classes), "dataset_bits": n * math.log2(n_classes),
        "curve": [dict(zip(("epoch", "step", "train_acc", "val_acc", "train_loss"), c))
                  for c in _thin(curve, cfg.keep_curve_points)],
    }
    log.info("%s %s width=%d P=%d steps=%d t_train=%s t_val=%s (%ss) train_acc=%.3f bits=%.0f", cfg.variant, task,
             cfg.width, out["P"], res["steps"], out["t_train"], out["t_val"], out["time_unit"], acc, out["bits"])
    return out


# ----------------------------------------------------------------------------------------------
# Analysis: power laws with censoring, crossings, the grokking threshold, capacity
# ----------------------------------------------------------------------------------------------

def fit_power_law(P: np.ndarray, T: np.ndarray, censored: np.ndarray | None = None,
                  level: float = 0.95, *, with_se: bool = True) -> dict[str, float]:
    """Fit ``T = a P^b`` as ``log T = log a + b log P + e``, ``e ~ N(0, s^2)``, with right censoring.

    A censored entry means ``T > T_i`` (the run hit its step cap ``T_i``). With no censoring this
    is ordinary least squares in log-log space; otherwise the Tobit likelihood is maximised, each
    censored point contributing ``log(1 - Phi((log T_i - mu_i) / s))``.

    Returns ``a``, ``b``, ``b_se``, ``b_lo``, ``b_hi`` (a Wald interval at ``level``), ``sigma``,
    ``n``, ``n_censored``; NaNs when fewer than two distinct P carry an uncensored time.
    ``with_se=False`` skips the standard error of a censored fit (a numerical Hessian; its
    interval is then NaN), for callers that need the point estimate only (a bootstrap).
    """
    P, T = np.asarray(P, float), np.asarray(T, float)
    cens = np.zeros(len(P), bool) if censored is None else np.asarray(censored, bool)
    if not (len(P) == len(T) == len(cens)):
        raise ValueError("fit_power_law: P, T and censored differ in length")
    if np.any(P <= 0) or np.any(T <= 0):
        raise ValueError("fit_power_law: P and T must be positive")
    nan = {"a": math.nan, "b": math.nan, "b_se": math.nan, "b_lo": math.nan, "b_hi": math.nan,
           "sigma": math.nan, "n": int(len(P)), "n_censored": int(cens.sum())}
    x, y = np.log(P), np.log(T)
    obs = ~cens
    if len(np.unique(x[obs])) < 2:
        return nan
    X = np.column_stack([np.ones_like(x), x])
    beta, *_ = np.linalg.lstsq(X[obs], y[obs], rcond=None)
    z = stats.norm.ppf(0.5 + level / 2)
    if not cens.any():
        resid = y - X @ beta
        dof = max(len(y) - 2, 1)
        s2 = float(resid @ resid / dof)
        cov = s2 * np.linalg.inv(X.T @ X)
        tq = stats.t.ppf(0.5 + level / 2, dof)
        se = math.sqrt(cov[1, 1])
        return {"a": float(np.exp(beta[0])), "b": float(beta[1]), "b_se": se, "b_lo": float(beta[1] - tq * se),
                "b_hi": float(beta[1] + tq * se), "sigma": math.sqrt(s2), "n": int(len(y)), "n_censored": 0}

    def nll(theta: np.ndarray) -> float:
        mu, s = X @ theta[:2], math.exp(theta[2])
        ll = stats.norm.logpdf(y[obs], mu[obs], s).sum() + stats.norm.logsf(y[cens], mu[cens], s).sum()
        return -float(ll)

    s0 = float(np.std(y[obs] - X[obs] @ beta)) or 0.1
    res = optimize.minimize(nll, np.r_[beta, math.log(max(s0, 1e-3))], method="BFGS")
    theta = res.x
    se = math.nan
    if with_se:
        hess = optimize.approx_fprime(theta, lambda t: optimize.approx_fprime(t, nll, 1e-5), 1e-5)
        try:
            se = math.sqrt(max(float(np.linalg.inv((hess + hess.T) / 2)[1, 1]), 0.0))
        except np.linalg.LinAlgError:
            pass
    return {"a": float(np.exp(theta[0])), "b": float(theta[1]), "b_se": se, "b_lo": float(theta[1] - z * se),
            "b_hi": float(theta[1] + z * se), "sigma": float(math.exp(theta[2])), "n": int(len(y)),
            "n_censored": int(cens.sum())}


def power_law_crossing(fit1: dict[str, float], fit2: dict[str, float]) -> float:
    """P at which ``a1 P^b1 = a2 P^b2``; NaN when the exponents are equal or a fit is missing."""
    a1, b1, a2, b2 = fit1["a"], fit1["b"], fit2["a"], fit2["b"]
    if not all(np.isfinite([a1, b1, a2, b2])) or b1 == b2:
        return math.nan
    return float(math.exp((math.log(a2) - math.log(a1)) / (b1 - b2)))


def crossing_point(P: np.ndarray, T1: np.ndarray, T2: np.ndarray) -> float:
    """First P at which the curves ``T1(P)`` and ``T2(P)`` cross, interpolated linearly in log-log.

    ``P`` must be increasing. Returns NaN when ``log T1 - log T2`` never changes sign (an exact
    tie at a grid point is a crossing there).
    """
    P, T1, T2 = (np.asarray(v, float) for v in (P, T1, T2))
    if len(P) < 2 or np.any(np.diff(P) <= 0):
        raise ValueError("crossing_point: P must hold at least two increasing values")
    d = np.log(T1) - np.log(T2)
    for i in range(len(P)):
        if d[i] == 0:
            return float(P[i])
        if i + 1 < len(P) and d[i] * d[i + 1] < 0:
            lx0, lx1 = math.log(P[i]), math.log(P[i + 1])
            return float(math.exp(lx0 + d[i] / (d[i] - d[i + 1]) * (lx1 - lx0)))
    return math.nan


def grokking_threshold(P: np.ndarray, grok_fraction: np.ndarray) -> dict[str, float]:
    """The smallest grid P from which on a majority of seeds grok at every larger P.

    Returns ``first_P`` (that grid point), ``P`` (the geometric mean of it and the grid point
    below; ``first_P`` itself when it is the smallest grid point, flagged by ``at_grid_edge``) and
    NaNs when the largest model does not grok.
    """
    P, frac = np.asarray(P, float), np.asarray(grok_fraction, float)
    order = np.argsort(P)
    P, frac = P[order], frac[order]
    groks = frac > 0.5
    if not groks[-1]:
        return {"P": math.nan, "first_P": math.nan, "at_grid_edge": 0}
    k = len(P) - 1
    while k > 0 and groks[k - 1]:
        k -= 1
    if k == 0:
        return {"P": float(P[0]), "first_P": float(P[0]), "at_grid_edge": 1}
    return {"P": float(math.sqrt(P[k - 1] * P[k])), "first_P": float(P[k]), "at_grid_edge": 0}


def capacity_fit(P: np.ndarray, bits: np.ndarray, level: float = 0.95) -> dict[str, float]:
    """Bits per parameter: least-squares slope of ``bits = C P`` through the origin, t-interval.

    Also returns the slope and intercept of the model with an intercept (``slope_icpt``,
    ``intercept``) as a check on proportionality.
    """
    P, bits = np.asarray(P, float), np.asarray(bits, float)
    if len(P) < 1 or len(P) != len(bits):
        raise ValueError("capacity_fit: need P and bits of equal, non-zero length")
    C = float(P @ bits / (P @ P))
    resid = bits - C * P
    dof = len(P) - 1
    se = math.sqrt(float(resid @ resid) / dof / float(P @ P)) if dof else math.nan  # one run: no interval
    tq = stats.t.ppf(0.5 + level / 2, dof) if dof else math.nan
    lin = stats.linregress(P, bits) if len(np.unique(P)) > 1 else None
    return {"bits_per_param": C, "se": se, "lo": C - tq * se, "hi": C + tq * se, "n": int(len(P)),
            "slope_icpt": float(lin.slope) if lin else math.nan,
            "intercept": float(lin.intercept) if lin else math.nan}
