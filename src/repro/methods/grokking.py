"""Memorisation speed vs generalisation speed across model sizes, and where grokking appears.

Implements "Model Capacity Determines Grokking through Competing Memorisation and Generalisation
Speeds" (arXiv 2605.09724) at CPU scale:

- the small transformer of the paper's code (pre-norm RMSNorm blocks, SwiGLU MLP of width 4d,
  causal attention, read-out at the last token ``=``), built from nanoGPT-style small modules;
- AdamW training, full batch where the set fits in one batch, with early stopping once the 99%
  thresholds are reached;
- T_mem(P): steps to 99% train accuracy on the random-label twin of the training set (§3, "random
  data of equivalent complexity"); T_gen(P): steps to 99% validation accuracy on the modular task;
- the capacity estimate of Morris et al. (2025), adapted as in the paper: bits memorised on random
  labels, ``n log2 V + sum_i log2 p(y_i | x_i)``, regressed on the parameter count P; the slope is
  bits per parameter (the paper reports C = 2.16);
- power laws T(P) = a P^b fitted in log-log space, their crossing, and the grokking threshold (the
  smallest P from which on models grok).

Choices the paper leaves open
-----------------------------
- Position information: learned absolute position embeddings (nanoGPT) instead of RoPE; sequences
  have 4 tokens, so this adds 4 d parameters.
- Accuracy is measured every ``eval_every`` steps in eval mode (no dropout) on the whole set; a
  time T is the first evaluated step at which accuracy >= 99%, so T has a resolution of
  ``eval_every`` steps.
- Weight decay: 1.0 on the modular task (the grokking runs), 0.01 on random labels (the speed and
  capacity runs), as in the paper's central configuration.
- A run that does not reach 99% within ``max_steps`` is *censored* (T > max_steps), never given the
  cap as its value. Power laws are fitted by maximum likelihood with right censoring (a Tobit
  regression of log T on log P with normal errors), which reduces to least squares when nothing is
  censored; the empirical crossing uses per-width medians, where a censored median is the cap (a
  lower bound), and is reported with that caveat.
- Grokking in one run: train and validation accuracy both reach 99%, and validation does so at
  least ``grok_delay_ratio`` (2) times later than training (the paper: generalisation "long after"
  memorisation). The threshold is the smallest grid P from which on a majority of seeds grok at
  every larger width, reported as the geometric mean of that P and the grid point below it.
- Capacity slope: least squares through the origin (bits = C P), with a t-interval from the
  residuals; the intercept model is reported beside it.

Deviations
----------
- The small preset uses p = 47 and widths 8 to 32 instead of p = 97 to 139 and widths 20 to 1000,
  step caps of 3000 (a 2-core CPU), lr 3e-3 instead of 1e-3 and no dropout instead of 0.2, so that
  models grok within the cap; the paper preset keeps the paper's values.
- The random-label twin permutes the training labels rather than drawing fresh uniform labels
  (see ``repro.papers.grokcap.synth``).
- Capacity runs train on random data holding ``capacity_data_factor`` (4) bits per parameter up to
  a step cap or a loss plateau; at CPU scale some stop at the cap, which biases C low.

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
    "GrokConfig", "GrokTransformer", "count_parameters", "train_run",
    "fit_power_law", "power_law_crossing", "crossing_point", "grokking_threshold", "capacity_fit",
    "bits_memorised", "TASKS",
]

log = logging.getLogger(__name__)

TASKS = ("modular", "random", "capacity")


@dataclass(frozen=True)
class GrokConfig:
    """One run's settings; defaults are the paper's central configuration (configs/central.yaml)."""

    p: int = 97                      # prime modulus (paper: 97 to 139)
    operation: str = "div"           # a / b mod p (addition as a variant)
    train_fraction: float = 0.5      # paper: 0.5
    width: int = 128                 # d_model (paper: widths 20 to 1000)
    depth: int = 2                   # paper: 2 blocks
    heads: int = 1                   # paper: 1 head
    dropout: float = 0.2             # paper: 0.2
    lr: float = 1e-3                 # AdamW, paper
    beta1: float = 0.9
    beta2: float = 0.98              # paper: betas (0.9, 0.98)
    weight_decay_grok: float = 1.0   # modular task (grokking runs), paper
    weight_decay_speed: float = 0.01  # random-label runs (speed and capacity), paper
    batch_size: int = 512            # paper: 512; full batch when the set is smaller
    max_steps: int = 100_000         # step cap: a run that hits it is censored
    eval_every: int = 10             # resolution of T
    threshold: float = 0.99          # the 99% accuracy thresholds
    labels: str = "permute"          # random-label twin: permute | uniform
    capacity_data_factor: float = 4.0  # capacity data hold factor x P bits (> 3.6, Morris et al.'s upper value)
    capacity_patience: int = 50      # evals without a 0.1% loss improvement ending a capacity run
    capacity_max_steps: int = 100_000  # step cap of a capacity run (its bits are read at the end)
    grok_delay_ratio: float = 2.0    # grokking: T_gen >= ratio * T_train (modular task)
    keep_curve_points: int = 200     # accuracy-curve points kept in a run's output


# ----------------------------------------------------------------------------------------------
# Model (nanoGPT-style small modules; B batch, T = 4 tokens, C = width, nh heads, hs = C / nh)
# ----------------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight  # (B, T, C)


class CausalSelfAttention(nn.Module):
    def __init__(self, width: int, heads: int, dropout: float) -> None:
        super().__init__()
        if width % heads:
            raise ValueError(f"grokking: width {width} is not divisible by heads {heads}")
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.proj = nn.Linear(width, width, bias=False)
        self.dropout = dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)                                # 3 x (B, T, C)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)          # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, C)                               # (B, T, C)
        return F.dropout(self.proj(y), self.dropout, self.training)


class SwiGLU(nn.Module):
    """The paper's feed-forward: w2(silu(w1 x) * w3 x), hidden width 4 C."""

    def __init__(self, width: int, dropout: float) -> None:
        super().__init__()
        self.w1 = nn.Linear(width, 4 * width, bias=False)
        self.w3 = nn.Linear(width, 4 * width, bias=False)
        self.w2 = nn.Linear(4 * width, width, bias=False)
        self.dropout = dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.silu(self.w1(x)) * self.w3(x)                                  # (B, T, 4C)
        return F.dropout(self.w2(h), self.dropout, self.training)           # (B, T, C)


class Block(nn.Module):
    def __init__(self, width: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.norm1, self.attn = RMSNorm(width), CausalSelfAttention(width, heads, dropout)
        self.norm2, self.mlp = RMSNorm(width), SwiGLU(width, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))                                     # (B, T, C)
        return x + self.mlp(self.norm2(x))                                   # (B, T, C)


class GrokTransformer(nn.Module):
    """Token + position embedding, ``depth`` pre-norm blocks, RMSNorm, logits at the last token."""

    def __init__(self, n_tokens: int, width: int, depth: int, heads: int, dropout: float = 0.0,
                 seq_len: int = 4) -> None:
        super().__init__()
        self.tok = nn.Embedding(n_tokens, width)
        self.pos = nn.Parameter(torch.randn(seq_len, width) * 0.02)  # learned positions (nanoGPT), not RoPE
        self.blocks = nn.ModuleList(Block(width, heads, dropout) for _ in range(depth))
        self.norm = RMSNorm(width)
        self.head = nn.Linear(width, n_tokens, bias=False)  # logits over all p + 2 tokens, as the paper

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos[: idx.shape[1]]                         # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, -1]))                                # (B, V): read-out at '='


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------

def bits_memorised(logits: torch.Tensor, y: torch.Tensor, n_classes: int) -> float:
    """Morris et al. (2025) memorisation: ``n log2 V + sum_i log2 p(y_i | x_i)`` in bits."""
    logp = F.log_softmax(logits.double(), dim=-1).gather(1, y[:, None]).squeeze(1)  # (n,) nats
    return float(len(y) * math.log2(n_classes) + logp.sum().item() / math.log(2))


@torch.no_grad()
def _evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float, torch.Tensor]:
    model.eval()
    logits = model(x)
    model.train()
    return float((logits.argmax(-1) == y).float().mean()), float(F.cross_entropy(logits, y)), logits


def _thin(values: list, keep: int) -> list:
    if len(values) <= keep:
        return values
    idx = np.unique(np.linspace(0, len(values) - 1, keep).round().astype(int))
    return [values[i] for i in idx]


def train_run(cfg: GrokConfig, task: str, x_train: np.ndarray | torch.Tensor, y_train: np.ndarray | torch.Tensor,
              x_val: np.ndarray | torch.Tensor | None = None, y_val: np.ndarray | torch.Tensor | None = None, *,
              n_tokens: int, seed: int, device: str = "cpu") -> dict[str, Any]:
    """Train one model on one task until its thresholds are reached or ``cfg.max_steps``.

    Parameters
    ----------
    cfg : GrokConfig
    task : {"modular", "random", "capacity"}
        ``modular`` stops once train and validation accuracy reach ``cfg.threshold``; ``random``
        once train accuracy does; ``capacity`` once train accuracy does or the train loss stops
        improving (``cfg.capacity_patience`` evaluations without a 0.1% relative gain).
    x_train, y_train : array or tensor, (n, 4) and (n,) int64
        Training token sequences and targets.
    x_val, y_val : array or tensor, optional
        Validation data (the modular task only).
    n_tokens : int
        Vocabulary size V: the residues, then the operator and ``=`` tokens (``p + 2``). Targets of
        the ``modular`` and ``random`` tasks are residues (``V - 2`` classes), those of ``capacity``
        any token (``V`` classes); bits memorised are counted over these classes.
    seed : int
        Seeds the initialisation, dropout and mini-batch order (the global torch RNG is left as found).

    Returns
    -------
    dict
        ``P``, ``t_train`` (steps to 99% train accuracy, or None when censored), ``t_val`` (modular),
        ``steps``, final accuracies and loss, ``bits`` memorised, and the thinned accuracy curve.
    """
    if task not in TASKS:
        raise ValueError(f"grokking: unknown task {task!r}; known: {', '.join(TASKS)}")
    if task == "modular" and (x_val is None or y_val is None):
        raise ValueError("grokking: the modular task needs validation data")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed % (2**63))
        model = GrokTransformer(n_tokens, cfg.width, cfg.depth, cfg.heads, cfg.dropout).to(device)
        wd = cfg.weight_decay_grok if task == "modular" else cfg.weight_decay_speed
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), weight_decay=wd,
                                foreach=True)  # one fused update over all tensors: 25% faster on CPU
        x, y = torch.as_tensor(x_train, device=device), torch.as_tensor(y_train, device=device)
        xv = yv = None
        if x_val is not None and y_val is not None:
            xv, yv = torch.as_tensor(x_val, device=device), torch.as_tensor(y_val, device=device)
        n, bs = len(y), min(cfg.batch_size, len(y))
        n_batches = n // bs  # drop the ragged last batch: every step sees bs examples
        curve: list[tuple[int, float, float, float]] = []
        t_train = t_val = None
        best_loss, stale = math.inf, 0
        step = 0
        model.train()
        max_steps = cfg.capacity_max_steps if task == "capacity" else cfg.max_steps
        while step < max_steps:
            perm = torch.randperm(n, device=device) if n_batches > 1 else None
            for b in range(n_batches):
                idx = perm[b * bs:(b + 1) * bs] if perm is not None else slice(None)
                loss = F.cross_entropy(model(x[idx]), y[idx])                 # full batch when n <= bs
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                step += 1
                if step % cfg.eval_every and step != max_steps:
                    continue
                acc, tr_loss, _ = _evaluate(model, x, y)
                vacc = _evaluate(model, xv, yv)[0] if xv is not None else float("nan")
                curve.append((step, acc, vacc, tr_loss))
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
        acc, tr_loss, logits = _evaluate(model, x, y)
    out = {
        "task": task, "width": cfg.width, "P": count_parameters(model), "n_train": n, "steps": step,
        "t_train": t_train, "t_val": t_val, "max_steps": max_steps,
        "train_acc": acc, "train_loss": tr_loss, "val_acc": curve[-1][2] if curve else float("nan"),
        "bits": bits_memorised(logits, y, n_tokens if task == "capacity" else n_tokens - 2),
        "dataset_bits": n * math.log2(n_tokens if task == "capacity" else n_tokens - 2),
        "curve": [dict(zip(("step", "train_acc", "val_acc", "train_loss"), c)) for c in _thin(curve, cfg.keep_curve_points)],
    }
    log.info("%s width=%d P=%d steps=%d t_train=%s t_val=%s train_acc=%.3f bits=%.0f", task, cfg.width,
             out["P"], step, t_train, t_val, acc, out["bits"])
    return out


# ----------------------------------------------------------------------------------------------
# Analysis: power laws with censoring, crossings, the grokking threshold, capacity
# ----------------------------------------------------------------------------------------------

def fit_power_law(P: np.ndarray, T: np.ndarray, censored: np.ndarray | None = None,
                  level: float = 0.95) -> dict[str, float]:
    """Fit ``T = a P^b`` as ``log T = log a + b log P + e``, ``e ~ N(0, s^2)``, with right censoring.

    A censored entry means ``T > T_i`` (the run hit its step cap ``T_i``). With no censoring this
    is ordinary least squares in log-log space; otherwise the Tobit likelihood is maximised, each
    censored point contributing ``log(1 - Phi((log T_i - mu_i) / s))``.

    Returns ``a``, ``b``, ``b_se``, ``b_lo``, ``b_hi`` (a Wald interval at ``level``), ``sigma``,
    ``n``, ``n_censored``; NaNs when fewer than two distinct P carry an uncensored time.
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
    hess = optimize.approx_fprime(theta, lambda t: optimize.approx_fprime(t, nll, 1e-5), 1e-5)
    try:
        se = math.sqrt(max(float(np.linalg.inv((hess + hess.T) / 2)[1, 1]), 0.0))
    except np.linalg.LinAlgError:
        se = math.nan
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
