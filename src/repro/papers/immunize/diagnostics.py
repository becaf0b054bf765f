"""Why a defence costs benign accuracy: per-term gradient norms of the defence objective and the benign features' drift.

Reads the trained defences (a unit's ``seed{n}.npz``: per model and defence the immunized extractor
parameters; ``<model>/none`` is the release theta0) and, per model and defence, reports

- the gradient norm in theta of each term of the objective (``repro.methods.immunization.train.Objective``,
  the one ``immunize`` minimises, with the preset's weights): ``r_well`` (R_well / R_well(theta0)), ``task``
  (w_task x the benign head's cross-entropy), ``r_ill`` and ``plateau`` (each / its value at theta0) and
  ``booster``, split into the output layer (``out``) and every other parameter (``hid``: the shared
  hidden layers; empty for a linear extractor), at the release (``rel_``) and at the defended
  extractor (``def_``). The task loss's head: at the release the head ``immunize`` starts from
  (``fit_head`` on the release's benign features, head_steps at head_lr); at the defended extractor the jointly
  trained head is not saved, so a head re-fit the same way on its benign features stands in;
- ``span_cos2``: the mean squared cosine of the principal angles between the column spans of the
  release's and the defended extractor's benign training features (1: the same span; 0: orthogonal);
- ``benign_acc`` (a benign probe's test accuracy after the utility budget, as ``experiment.attack``),
  ``benign_acc_lstsq`` (the test accuracy of the least-squares one-hot probe, closed form: what the
  features hold whatever the optimiser's speed) and ``benign_kappa`` (the condition number of the
  benign probe Hessian Z^T Z / n);
- ``drift_hid`` / ``drift_out``: ||theta - theta0|| / ||theta0|| over the hidden and output parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from repro.methods.immunization.extractors import Extractor, make_extractor
from repro.methods.immunization.train import TERMS, Objective, fit_head
from repro.papers.immunize.synth import BENIGN_CLASSES, HARMFUL_CLASSES, Tasks

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TERMS", "span_cos2", "term_gradients", "diagnose", "diagnose_unit", "summarise"]



def span_cos2(z0: torch.Tensor, z1: torch.Tensor) -> float:
    """Mean squared cosine of the principal angles between the column spans of z0 and z1 (same row count)."""
    if z0.ndim != 2 or z1.ndim != 2 or z0.shape[0] != z1.shape[0]:
        raise ValueError(f"span_cos2: need two matrices with the same rows; got {tuple(z0.shape)}, {tuple(z1.shape)}")
    q0, q1 = torch.linalg.qr(z0)[0], torch.linalg.qr(z1)[0]
    cos = torch.linalg.svdvals(q0.T @ q1).clamp(max=1.0)
    return float((cos ** 2).sum() / max(z0.shape[1], z1.shape[1]))


def _output_mask(ext: Extractor) -> torch.Tensor:
    """True on the extractor's output-layer parameters, False on the hidden ones."""
    mask = torch.zeros(ext.n_params, dtype=torch.bool)
    mask[ext.output] = True
    return mask


def term_gradients(ext: Extractor, theta: torch.Tensor, objective: Objective, xh: torch.Tensor, xb: torch.Tensor,
                   yb: torch.Tensor, head: torch.Tensor, seed: int) -> dict[str, dict[str, float]]:
    """{term: {hid, out}}: gradient norms in theta of each of ``TERMS`` (weighted and normalised by
    ``objective``) on harmful inputs ``xh`` and benign inputs ``xb`` with task labels ``yb`` (0 to
    classes - 1) and the task term's ``head``; the plateau term's perturbations from ``seed``."""
    out_mask = _output_mask(ext)
    out = {}
    for name in TERMS:
        th = theta.detach().clone().requires_grad_(True)
        term = objective.term(name, ext.features(th, xh), ext.features(th, xb), head=head, y_benign=yb,
                              generator=torch.Generator().manual_seed(seed))
        g, = torch.autograd.grad(term, th)
        out[name] = {"hid": float(g[~out_mask].norm()), "out": float(g[out_mask].norm())}
    return out


def diagnose(ext: Extractor, theta: torch.Tensor, theta0: torch.Tensor, tasks: Tasks, cfg: dict[str, Any],
             seed: int) -> dict[str, float]:
    """One model and defence: the module docstring's columns (a flat row)."""
    icfg, util = cfg["immunize"], cfg["utility"]
    xh, yh = tasks.split("train", "harmful")
    xb, yb = tasks.split("train", "benign")
    xb_t, yb_t = tasks.split("test", "benign")
    yh, yb, yb_t = yh - HARMFUL_CLASSES[0], yb - BENIGN_CLASSES[0], yb_t - BENIGN_CLASSES[0]
    n_benign = len(BENIGN_CLASSES)
    objective = Objective(ext, theta0, xh, yh, xb, seed=seed,
                          **{k: v for k, v in icfg.items() if k not in ("steps", "lr")})
    row: dict[str, float] = {}
    with torch.no_grad():
        zb0, zb = ext.features(theta0, xb), ext.features(theta, xb)
        zb_t = ext.features(theta, xb_t)
    for at, th, z in (("rel", theta0, zb0), ("def", theta, zb)):
        head = objective.fit_task_head(z, yb)
        for term, parts in term_gradients(ext, th, objective, xh, xb, yb, head, seed).items():
            for part, v in parts.items():
                row[f"{at}_{term}_{part}"] = v
    row["span_cos2"] = span_cos2(zb0, zb)
    w = fit_head(zb, yb, n_benign, util["steps"], util["lr"])
    row["benign_acc"] = float(((zb_t @ w).argmax(1) == yb_t).double().mean())
    w = torch.linalg.lstsq(zb, F.one_hot(yb, n_benign).to(zb.dtype)).solution
    row["benign_acc_lstsq"] = float(((zb_t @ w).argmax(1) == yb_t).double().mean())
    ev = torch.linalg.eigvalsh(zb.T @ zb / zb.shape[0])
    row["benign_kappa"] = float(ev[-1] / ev[0])
    mask = _output_mask(ext)
    for part, sel in (("hid", ~mask), ("out", mask)):
        ref = theta0[sel].norm()
        row[f"drift_{part}"] = float((theta[sel] - theta0[sel]).norm() / ref) if sel.any() else 0.0
    return row


def diagnose_unit(cfg: dict[str, Any], tasks: Tasks, thetas: dict[str, np.ndarray], seed: int, train_seed: int
                  ) -> list[dict[str, Any]]:
    """Rows (seed, model, method, columns) for every model and defence of one unit's trained parameters."""
    d, k = tasks.theta0.shape
    rows = []
    for model in cfg["models"]:
        if f"{model}/none" not in thetas:
            raise ValueError(f"immunize diagnostics: seed {seed} has no release ({model}/none) among {sorted(thetas)}")
        ext = make_extractor(model, d, k, **{key: v for key, v in cfg.get("release", {}).get(model, {}).items()
                                             if key in ("hidden", "dim", "patch")})
        theta0 = torch.as_tensor(thetas[f"{model}/none"])
        for method in cfg["methods"]:
            theta = torch.as_tensor(thetas[f"{model}/{method}"])
            rows.append({"seed": seed, "model": model, "method": method}
                        | diagnose(ext, theta, theta0, tasks, cfg, train_seed))
    return rows


def summarise(table: "pd.DataFrame", level: float = 0.95) -> "pd.DataFrame":
    """Per model and defence and column: the mean over seeds with its bootstrap interval (``repro.stats``)."""
    import pandas as pd

    from repro.stats.intervals import bootstrap_interval

    cols = [c for c in table.columns if c not in ("seed", "model", "method")]
    rows = []
    for (model, method), g in table.groupby(["model", "method"], sort=False):
        for c in cols:
            v = g.sort_values("seed")[c].to_numpy(float)
            iv = bootstrap_interval(v, level=level) if len(v) > 1 and np.ptp(v) > 0 else None
            rows.append({"model": model, "method": method, "column": c, "n_seeds": len(v), "mean": float(v.mean()),
                         "low": iv.low if iv else float(v.mean()), "high": iv.high if iv else float(v.mean())})
    return pd.DataFrame(rows)
