"""Discrete-time survival: time bins, the negative log-likelihood, risk and the C-index.

One implementation shared by every survival model of the project (Patch-GCN / CLAM convention,
Chen et al., "Whole Slide Images are 2D Point Clouds", MICCAI 2021, ``utils/utils.py``):

- time bins from the quartiles of the *uncensored* survival times (4 bins), :func:`time_bins`;
- hazards ``h = sigmoid(logits)``, survival ``S(t) = prod_{s<=t} (1 - h(s))``;
- NLL: uncensored ``-log S(y-1) - log h(y)``, censored ``-log S(y)`` (:func:`nll_survival_loss`);
- risk ``-sum_t S(t)`` (:func:`risk_from_logits`);
- Harrell's C-index exactly as ``sksurv.metrics.concordance_index_censored``
  (:func:`concordance_index`): a pair (i, j) is comparable when i had the event and
  ``t_j > t_i``, or ``t_j == t_i`` and j is censored; tied risks count 1/2.
"""

from __future__ import annotations

import numpy as np

__all__ = ["time_bins", "discretize", "nll_survival_loss", "risk_from_logits", "concordance_index"]


def time_bins(times: np.ndarray, events: np.ndarray, n_bins: int = 4) -> np.ndarray:
    """Inner cut points (``n_bins - 1``) at the quantiles of the uncensored ``times``.

    Raises ``ValueError`` when there is no uncensored time to take quantiles of.
    """
    times = np.asarray(times, dtype=float)
    events = np.asarray(events).astype(bool)
    if not events.any():
        raise ValueError("time_bins: no uncensored survival time; cannot place the bins")
    qs = np.linspace(0, 1, n_bins + 1)[1:-1]
    return np.quantile(times[events], qs)


def discretize(times: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Bin index (0 .. len(cuts)) of each time; a time equal to a cut point goes to the lower bin."""
    return np.searchsorted(np.asarray(cuts, dtype=float), np.asarray(times, dtype=float), side="left").astype(np.int64)


def nll_survival_loss(logits, y_bin, event, eps: float = 1e-7):
    """Discrete-time survival NLL, mean over the batch (Patch-GCN ``nll_loss`` with alpha = 0).

    Parameters
    ----------
    logits : torch.Tensor, (B, T)
        Hazard logits; ``h = sigmoid(logits)``.
    y_bin : torch.Tensor, (B,) int64
        Time bin of each sample.
    event : torch.Tensor, (B,)
        1 when the death was observed, 0 when censored.
    """
    import torch

    hazards = torch.sigmoid(logits)                                        # (B, T)
    surv = torch.cumprod(1 - hazards, dim=1)                                # (B, T) S(t)
    surv_pad = torch.cat([torch.ones_like(surv[:, :1]), surv], dim=1)       # (B, T+1), S(-1) = 1
    y = y_bin.long().view(-1, 1)
    c = 1.0 - event.float().view(-1, 1)                                     # censorship indicator
    s_prev = torch.gather(surv_pad, 1, y).clamp_min(eps)                    # S(y-1)
    h_y = torch.gather(hazards, 1, y).clamp_min(eps)                        # h(y)
    s_y = torch.gather(surv_pad, 1, y + 1).clamp_min(eps)                   # S(y)
    uncensored = -(1 - c) * (torch.log(s_prev) + torch.log(h_y))
    censored = -c * torch.log(s_y)
    return (uncensored + censored).mean()


def risk_from_logits(logits):
    """Risk score ``-sum_t S(t)`` (higher = earlier death); works on torch tensors and arrays."""
    import torch

    logits = torch.as_tensor(logits, dtype=torch.float32)
    surv = torch.cumprod(1 - torch.sigmoid(logits), dim=-1)
    return -surv.sum(dim=-1)


def concordance_index(event: np.ndarray, time: np.ndarray, risk: np.ndarray, tied_tol: float = 1e-8) -> float:
    """Harrell's C-index, as ``sksurv.metrics.concordance_index_censored(...)[0]``.

    Vectorised over pairs (O(n^2) memory; fine for cohorts of a few thousand slides).
    Raises ``ValueError`` when no pair is comparable.
    """
    event = np.asarray(event).astype(bool)
    time = np.asarray(time, dtype=float)
    risk = np.asarray(risk, dtype=float)
    if not (event.shape == time.shape == risk.shape) or event.ndim != 1:
        raise ValueError(f"concordance_index: event, time, risk must be 1-d of equal length; got "
                         f"{event.shape}, {time.shape}, {risk.shape}")
    ti, tj = time[:, None], time[None, :]
    comparable = event[:, None] & ((tj > ti) | ((tj == ti) & ~event[None, :]))  # (n, n): i event, j later
    n_comp = comparable.sum()
    if n_comp == 0:
        raise ValueError("concordance_index: no comparable pairs")
    diff = risk[:, None] - risk[None, :]
    ties = np.abs(diff) <= tied_tol
    concordant = (diff > 0) & ~ties
    return float((concordant[comparable].sum() + 0.5 * ties[comparable].sum()) / n_comp)
